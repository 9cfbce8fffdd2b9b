import { PROXY_CONTAINER } from '../../names/index.js';
import { ENV } from './proxy-env.js';
import { envValue, objectList, type JsonObject } from './pod.js';

/** The probes kubelet runs, and the status-port path each becomes. */
const PROBES = [
  ['readinessProbe', 'readyz'],
  ['livenessProbe', 'livez'],
  ['startupProbe', 'startupz'],
] as const;

/** The original HTTP probes, by the status-port path that now stands for them (MESH_ORCH_APP_PROBERS). */
export type AppProbers = Record<string, { httpGet: JsonObject; timeoutSeconds?: number }>;

/**
 * Points every app container's HTTP probe at the agent's status port (`/app-health/<container>/
 * readyz|livez|startupz`; HTTPS becomes HTTP, the agent speaks HTTPS to the app) and returns the
 * originals, named ports resolved to numbers, for the agent. Probes already on the status port,
 * or on a named port the container does not declare, are left alone. A container whose probe
 * changes is replaced in `containers` by a copy (the containers themselves are not written).
 */
export function rewriteAppProbes(containers: JsonObject[], statusPort: number): AppProbers {
  const probers: AppProbers = {};
  containers.forEach((original, at) => {
    const name = String(original['name']);
    if (name === PROXY_CONTAINER) return;
    let container = original;
    for (const [field, suffix] of PROBES) {
      const probe = container[field];
      if (!isObject(probe) || !isObject(probe['httpGet'])) continue;
      const httpGet = probe['httpGet'];
      const port = resolvePort(container, httpGet['port']);
      if (port === undefined || port === statusPort) continue;
      const path = `/app-health/${name}/${suffix}`;
      probers[path] = originalProbe(httpGet, port, probe['timeoutSeconds']);
      const rewritten: JsonObject = { ...httpGet, path, port: statusPort };
      if (rewritten['scheme'] === 'HTTPS') rewritten['scheme'] = 'HTTP';
      if (container === original) container = { ...original };
      container[field] = { ...probe, httpGet: rewritten };
    }
    containers[at] = container;
  });
  return sortedByPath(probers);
}

/** Puts back the probes `rewriteAppProbes` rewrote, from the proxy container's MESH_ORCH_APP_PROBERS. */
export function restoreAppProbes(containers: readonly JsonObject[]): void {
  const proxy = containers.find((container) => container['name'] === PROXY_CONTAINER);
  const text = envValue(proxy, ENV.appProbers);
  if (text === undefined || text === '') return;
  const probers = JSON.parse(text) as AppProbers;
  for (const [path, original] of Object.entries(probers)) {
    const match = /^\/app-health\/([^/]+)\/(readyz|livez|startupz)$/.exec(path);
    if (!match) continue;
    const container = containers.find((c) => c['name'] === match[1]);
    const field = PROBES.find(([, suffix]) => suffix === match[2])?.[0];
    const probe = field === undefined ? undefined : container?.[field];
    if (isObject(probe)) probe['httpGet'] = original.httpGet;
  }
}

function originalProbe(httpGet: JsonObject, port: number, timeoutSeconds: unknown): { httpGet: JsonObject; timeoutSeconds?: number } {
  // Field order of the reference's JSON (Go's HTTPGetAction): path, port, host, scheme, httpHeaders.
  const original: JsonObject = {};
  if (httpGet['path'] !== undefined) original['path'] = httpGet['path'];
  original['port'] = port;
  for (const field of ['host', 'scheme', 'httpHeaders']) if (httpGet[field] !== undefined) original[field] = httpGet[field];
  return typeof timeoutSeconds === 'number' ? { httpGet: original, timeoutSeconds } : { httpGet: original };
}

function resolvePort(container: JsonObject, port: unknown): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port !== 'string') return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  const named = objectList(container, 'ports').find((p) => p['name'] === port);
  return typeof named?.['containerPort'] === 'number' ? named['containerPort'] : undefined;
}

function sortedByPath(probers: AppProbers): AppProbers {
  return Object.fromEntries(Object.entries(probers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
