import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, UsageError } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';

/** The daemon's ControlZ introspection port (`--ctrlz_port`). */
export const CONTROLZ_PORT = 9876;

/** The levels `admin log` accepts, as the seed lists them. */
export const ADMIN_LOG_LEVELS = ['none', 'error', 'warn', 'info', 'debug'] as const;

const LEVEL_PATTERN = new RegExp(`^(\\w+):(${ADMIN_LOG_LEVELS.join('|')})$`);

/** A logging scope as ControlZ serves it at `/scopej/`. */
export interface ScopeJson {
  readonly name: string;
  readonly description?: string;
  readonly output_level: string;
  readonly stack_trace_level: string;
  readonly log_callers?: boolean;
}

/** Reading and changing a daemon's scopes: ControlZ through a port-forward, or a stand-in. */
export interface ScopeClient {
  list(): Promise<ScopeJson[]>;
  set(scope: string, patch: { output_level?: string; stack_trace_level?: string }): Promise<void>;
}

export interface AdminLogRequest {
  /** `--level` as given. */
  readonly level?: string;
  /** `--stack-trace-level` as given. */
  readonly stackTraceLevel?: string;
  /** `-r/--reset`: every scope back to info. */
  readonly reset: boolean;
  readonly output: 'short' | 'json';
}

/** `ads:debug,authorization:warn` into scope → level, naming the flag and the part that is wrong. */
export function parseScopeLevels(flag: string, value: string): Map<string, string> {
  const levels = new Map<string, string>();
  for (const part of value.split(',').map((item) => item.trim())) {
    const match = LEVEL_PATTERN.exec(part);
    if (!match)
      throw new UsageError(`${flag} "${part}": pattern <scope>:<level> with level one of ${ADMIN_LOG_LEVELS.join(', ')} did not match`, { exitCode: 64 });
    levels.set(match[1] ?? '', match[2] ?? '');
  }
  return levels;
}

/**
 * `admin log`: lists the daemon's scopes (`active_scopes:` then `  <scope>:<level>` sorted, or
 * `-o json` `[{"scope_name","log_level"}]`), or sets levels (`--level`, `--stack-trace-level`,
 * in parallel, each scope checked against the daemon's), or resets every scope to info. Setting
 * prints nothing, as in the reference.
 */
export async function adminLog(client: ScopeClient, request: AdminLogRequest): Promise<string> {
  if (request.reset && (request.level !== undefined || request.stackTraceLevel !== undefined)) {
    throw new UsageError(`--${request.level !== undefined ? 'level' : 'stack-trace-level'} cannot be combined with --reset`, { exitCode: 64 });
  }
  const levels = request.level !== undefined ? parseScopeLevels('--level', request.level) : new Map<string, string>();
  const stackLevels = request.stackTraceLevel !== undefined ? parseScopeLevels('--stack-trace-level', request.stackTraceLevel) : new Map<string, string>();
  const scopes = (await client.list()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (request.reset) {
    await Promise.all(scopes.map((scope) => client.set(scope.name, { output_level: 'info' })));
    return '';
  }
  if (levels.size === 0 && stackLevels.size === 0) return renderScopes(scopes, request.output);
  const known = new Set(scopes.map((scope) => scope.name));
  for (const [flag, map] of [
    ['--level', levels],
    ['--stack-trace-level', stackLevels],
  ] as const) {
    const unknown = [...map.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0)
      throw new UsageError(`${flag}: unknown scope ${unknown.map((name) => `"${name}"`).join(', ')}; the daemon's scopes are ${[...known].join(', ')}`, {
        exitCode: 64,
      });
  }
  const names = new Set([...levels.keys(), ...stackLevels.keys()]);
  await Promise.all(
    [...names].map((name) =>
      client.set(name, {
        ...(levels.has(name) ? { output_level: levels.get(name) as string } : {}),
        ...(stackLevels.has(name) ? { stack_trace_level: stackLevels.get(name) as string } : {}),
      }),
    ),
  );
  return '';
}

function renderScopes(scopes: readonly ScopeJson[], output: 'short' | 'json'): string {
  if (output === 'json')
    return `${JSON.stringify(
      scopes.map((scope) => ({ scope_name: scope.name, log_level: scope.output_level })),
      null,
      2,
    )}\n`;
  return `active_scopes:\n${scopes.map((scope) => `  ${scope.name}:${scope.output_level}\n`).join('')}`;
}

/** A daemon pod's ControlZ scopes through a port-forward to `port` (one per request). */
export function controlzScopes(kubeConfig: KubeConfig, namespace: string, pod: string, port: number): ScopeClient {
  const call = async (method: string, path: string, body?: string): Promise<string> => {
    const answer = await podHttp(kubeConfig, {
      namespace,
      pod,
      port,
      method,
      path,
      ...(body !== undefined ? { body, headers: { 'Content-Type': 'application/json' } } : {}),
    });
    if (answer.status < 200 || answer.status >= 300) {
      throw new MeshError('port-forward-failed', `ControlZ of ${namespace}.${pod} answered ${answer.status} to ${method} ${path}: ${answer.body.trim()}`);
    }
    return answer.body;
  };
  return {
    list: async () => {
      const parsed = JSON.parse(await call('GET', '/scopej/')) as unknown;
      if (!Array.isArray(parsed)) throw new MeshError('port-forward-failed', `ControlZ of ${namespace}.${pod}: /scopej/ is not a list of scopes`);
      return parsed as ScopeJson[];
    },
    set: async (scope, patch) => {
      await call('PUT', `/scopej/${encodeURIComponent(scope)}`, JSON.stringify(patch));
    },
  };
}
