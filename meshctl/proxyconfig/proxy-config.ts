import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { MeshError, UsageError, errorMessage } from '../../runtime/index.js';
import { dumpOf, parseConfigDump, type EnvoyConfigDump } from './config-dump.js';
import {
  clusterSummary,
  endpointSummary,
  filteredClusters,
  filteredListeners,
  filteredRoutes,
  listenerSummary,
  routeSummary,
  secretSummary,
  type ClusterFilter,
  type EndpointFilter,
  type ListenerFilter,
  type RouteFilter,
} from './summaries.js';

/** Where a proxy's admin answers come from: the proxy itself (through a port-forward), or files. */
export interface ProxyAdmin {
  /** `GET /config_dump` (with `include_eds` when asked). */
  configDump(): Promise<EnvoyConfigDump>;
  /** `GET /clusters?format=json`. */
  clusters(): Promise<unknown>;
  /** `POST /logging[?<query>]`: the proxy's answer. */
  logging(query: string): Promise<string>;
}

/** `-f/--file`: a saved `/config_dump` (or `/clusters?format=json` for `endpoint`); `-` is stdin. */
export function fileAdmin(path: string, readStdin: () => string = () => readFileSync(0, 'utf8')): ProxyAdmin {
  const text = (): string => {
    try {
      return path === '-' ? readStdin() : readFileSync(path, 'utf8');
    } catch (error) {
      throw new UsageError(`--file ${path}: cannot read it: ${errorMessage(error)}`, { exitCode: 64, cause: error });
    }
  };
  return {
    configDump: () => Promise.resolve(parseConfigDump(text(), path)),
    clusters: () => {
      try {
        return Promise.resolve(JSON.parse(text()) as unknown);
      } catch (error) {
        throw new UsageError(`${path}: not JSON: ${errorMessage(error)}`, { exitCode: 65, cause: error });
      }
    },
    logging: () => Promise.reject(new UsageError("proxy-config log needs a pod: it reads and sets the live proxy's log levels", { exitCode: 64 })),
  };
}

export type ProxyConfigOutput = 'short' | 'json' | 'yaml';

export type ProxyConfigRequest =
  | { readonly kind: 'cluster'; readonly filter: ClusterFilter }
  | { readonly kind: 'listener'; readonly filter: ListenerFilter; readonly verbose: boolean }
  | { readonly kind: 'route'; readonly filter: RouteFilter; readonly verbose: boolean }
  | { readonly kind: 'endpoint'; readonly filter: EndpointFilter }
  | { readonly kind: 'secret' }
  | { readonly kind: 'bootstrap' }
  | { readonly kind: 'all'; readonly cluster: ClusterFilter; readonly listener: ListenerFilter; readonly route: RouteFilter; readonly verbose: boolean };

/** `meshctl proxy-config <kind>`: the reference's short table, or the selected config as JSON or YAML. */
export async function proxyConfig(admin: ProxyAdmin, request: ProxyConfigRequest, output: ProxyConfigOutput): Promise<string> {
  if (request.kind === 'endpoint') {
    const clusters = await admin.clusters();
    return output === 'short' ? endpointSummary(clusters, request.filter) : render(clusters, output);
  }
  const dump = await admin.configDump();
  switch (request.kind) {
    case 'cluster': {
      if (output !== 'short') return render(filteredClusters(dump, request.filter), output);
      return clusterSummary(dump, request.filter);
    }
    case 'listener':
      return output === 'short' ? listenerSummary(dump, request.filter, request.verbose) : render(filteredListeners(dump, request.filter), output);
    case 'route':
      return output === 'short' ? routeSummary(dump, request.filter, request.verbose) : render(filteredRoutes(dump, request.filter), output);
    case 'secret':
      return output === 'short' ? secretSummary(dump) : render(dumpOf(dump, 'SecretsConfigDump'), output);
    case 'bootstrap':
      return render(dumpOf(dump, 'BootstrapConfigDump'), output === 'short' ? 'json' : output);
    case 'all': {
      if (output !== 'short') return render(dump, output);
      return [
        clusterSummary(dump, request.cluster),
        listenerSummary(dump, request.listener, request.verbose),
        routeSummary(dump, request.route, request.verbose),
        secretSummary(dump),
      ].join('\n');
    }
  }
}

function render(value: unknown, output: 'json' | 'yaml'): string {
  return output === 'json' ? `${JSON.stringify(value, null, 4)}\n` : stringify(value, { lineWidth: 0 });
}

/** Envoy's levels and the reference's checks of `--level [<logger>:]<level>[,…]` against the proxy's loggers. */
export const PROXY_LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;

/**
 * `proxy-config log`: with `--level`, each `<logger>:<level>` (or `=`; a bare level is every
 * logger) checked against the proxy's active loggers, then set; `--reset` sets every logger to
 * `resetLevel`. Prints the proxy's answer (its loggers and their levels).
 */
export async function proxyLog(admin: ProxyAdmin, options: { readonly level?: string; readonly reset: boolean; readonly resetLevel: string }): Promise<string> {
  if (options.reset) return admin.logging(`level=${options.resetLevel}`);
  if (options.level === undefined || options.level === '') return admin.logging('');
  const active = new Set([...(await admin.logging('')).matchAll(/^ {2}([a-z0-9_]+): /gm)].map((m) => m[1]));
  const settings = options.level.split(',').map((item) => {
    const [logger, level] = item.includes(':') || item.includes('=') ? item.split(/[:=]/, 2) : ['level', item];
    if (!(PROXY_LOG_LEVELS as readonly string[]).includes(level ?? '')) throw new UsageError(`unrecognized logging level: ${level ?? ''}`, { exitCode: 64 });
    if (logger !== 'level' && !active.has(logger)) throw new UsageError(`unrecognized logger name: ${logger ?? ''}`, { exitCode: 64 });
    return `${logger ?? 'level'}=${level ?? ''}`;
  });
  let answer = '';
  for (const setting of settings) answer = await admin.logging(setting);
  if (answer === '') throw new MeshError('proxy-config-failed', 'the proxy did not answer /logging');
  return answer;
}
