import { MeshError } from '../../runtime/index.js';
import type { XdsResponse } from './xds-query.js';
import { controlPlaneOf } from './xds-syncz.js';

/** The debug views the daemon serves over `mesh.io/debug`, when it does not list them itself. */
const KNOWN_DEBUG_TYPES = ['syncz', 'adsz', 'push_status', 'config_dump?proxyID=<pod>.<namespace>', 'config_distribution?resource=<Kind>/<namespace>/<name>'];

/** The body of a `mesh.io/debug` response: the view's JSON. */
export function debugBody(response: XdsResponse): unknown {
  const text = Buffer.from(response.resources[0]?.value ?? new Uint8Array()).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The reference's client-side hints: an unknown type lists the supported ones, a view that needs
 * a proxy says how to name it. Undefined when there is nothing to add.
 */
export function internalDebugHint(problem: string): string | undefined {
  const unknown = /unknown debug resource "[^"]*": one of (.*)$/m.exec(problem);
  if (unknown || /404 page not found/.test(problem)) {
    const list = unknown?.[1]?.split(',').map((item) => item.trim()) ?? KNOWN_DEBUG_TYPES;
    return `error: according to below command list, please check all supported internal debug commands\n${list.join('\n')}`;
  }
  if (/must provide a proxyID/i.test(problem)) return 'error: please check the query string of the debug command\ne.g. config_dump?proxyID=<pod>.<namespace>';
  if (/must provide a resource query parameter/i.test(problem))
    return 'error: please check the query string of the debug command\ne.g. config_distribution?resource=VirtualService/default/bookinfo';
  return undefined;
}

/** A view the daemon answered with an error of its own (`{"error": …}`): a failure with the hint. */
export function debugViewError(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const error = (body as Record<string, unknown>)['error'];
  return typeof error === 'string' ? error : undefined;
}

/** `internal-debug` output: the first daemon's view, or with `--all` a map by control plane id. */
export function renderInternalDebug(answers: ReadonlyMap<string, XdsResponse>, all: boolean): string {
  if (!all) {
    const first = [...answers.values()][0];
    if (!first) throw new MeshError('xds-query-failed', 'no meshd instance answered');
    const body = debugBody(first);
    const problem = debugViewError(body);
    const hint = problem === undefined ? undefined : internalDebugHint(problem);
    if (hint) throw new MeshError('xds-query-failed', `${problem}\n${hint}`);
    return `${typeof body === 'string' ? body : JSON.stringify(body, null, 2)}\n`;
  }
  // Keyed by the control plane id, or the daemon's name when its response does not say.
  const idOf = (daemon: string, response: XdsResponse): string => {
    const id = controlPlaneOf(response).id;
    return id === 'MISSING' || id === 'INVALID' ? daemon : id;
  };
  const byDaemon = Object.fromEntries([...answers].map(([daemon, response]) => [idOf(daemon, response), debugBody(response)]));
  return `${JSON.stringify(byDaemon, null, 2)}\n`;
}
