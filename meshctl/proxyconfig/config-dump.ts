import { UsageError, errorMessage } from '../../runtime/index.js';

export type Json = Record<string, unknown>;

/** Envoy's `/config_dump` as JSON: `{configs: [<typed dumps>]}`. */
export interface EnvoyConfigDump {
  readonly configs: readonly Json[];
}

/** The reference's sysexits code for a file that does not parse. */
export const EXIT_DATA_ERROR = 65;

/** A config dump from text (a file or a proxy's answer), refused with a clear message when it is not one. */
export function parseConfigDump(text: string, source: string): EnvoyConfigDump {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source}: not a config dump: ${errorMessage(error)}`, { exitCode: EXIT_DATA_ERROR, cause: error });
  }
  const configs = (parsed as { configs?: unknown } | null)?.configs;
  if (!Array.isArray(configs))
    throw new UsageError(`${source}: not a config dump: no "configs" array (the output of the proxy's /config_dump)`, { exitCode: EXIT_DATA_ERROR });
  return { configs: configs.filter((c): c is Json => typeof c === 'object' && c !== null) };
}

/** The dump of one kind (`ClustersConfigDump`, …), or an empty one. */
export function dumpOf(dump: EnvoyConfigDump, kind: string): Json {
  return dump.configs.find((config) => String(config['@type'] ?? '').endsWith(`.${kind}`)) ?? {};
}

/** The proxy type of the dump's bootstrap node ID (`sidecar`, `router`…), when the dump has a bootstrap. */
export function proxyTypeOf(dump: EnvoyConfigDump): string | undefined {
  const node = ((dumpOf(dump, 'BootstrapConfigDump')['bootstrap'] as Json | undefined)?.['node'] as Json | undefined) ?? {};
  const id = node['id'];
  return typeof id === 'string' && id.includes('~') ? id.slice(0, id.indexOf('~')) : undefined;
}

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** Static and dynamic active clusters. */
export function clustersOf(dump: EnvoyConfigDump): Json[] {
  const clusters = dumpOf(dump, 'ClustersConfigDump');
  return [...list(clusters['static_clusters']), ...list(clusters['dynamic_active_clusters'])].map((entry) => (entry['cluster'] as Json | undefined) ?? {});
}

/** Static and dynamic (active) listeners. */
export function listenersOf(dump: EnvoyConfigDump): Json[] {
  const listeners = dumpOf(dump, 'ListenersConfigDump');
  return [
    ...list(listeners['static_listeners']).map((entry) => (entry['listener'] as Json | undefined) ?? {}),
    ...list(listeners['dynamic_listeners']).map((entry) => ((entry['active_state'] as Json | undefined)?.['listener'] as Json | undefined) ?? {}),
  ].filter((listener) => Object.keys(listener).length > 0);
}

/** Static and dynamic route configurations. */
export function routeConfigsOf(dump: EnvoyConfigDump): Json[] {
  const routes = dumpOf(dump, 'RoutesConfigDump');
  return [...list(routes['static_route_configs']), ...list(routes['dynamic_route_configs'])].map((entry) => (entry['route_config'] as Json | undefined) ?? {});
}

/** Dynamic active and warming secrets, with their state. */
export function secretsOf(dump: EnvoyConfigDump): { state: 'ACTIVE' | 'WARMING'; entry: Json }[] {
  const secrets = dumpOf(dump, 'SecretsConfigDump');
  return [
    ...list(secrets['dynamic_active_secrets']).map((entry) => ({ state: 'ACTIVE' as const, entry })),
    ...list(secrets['dynamic_warming_secrets']).map((entry) => ({ state: 'WARMING' as const, entry })),
  ];
}

/**
 * `filter_metadata.<key>.config` of a cluster or route: the config path it came from. Reads Envoy's
 * JSON form (`{config: "…"}`) and the proto form of a Struct (`{fields: {config: {string_value}}}`).
 */
export function configPathOf(metadata: unknown, key = 'mesh'): string | undefined {
  const entry = ((metadata as Json | undefined)?.['filter_metadata'] as Json | undefined)?.[key] as Json | undefined;
  if (!entry) return undefined;
  if (typeof entry['config'] === 'string') return entry['config'];
  const field = (entry['fields'] as Json | undefined)?.['config'] as Json | undefined;
  return typeof field?.['string_value'] === 'string' ? field['string_value'] : undefined;
}

/** `<name>.<namespace>` of `/apis/<group>/<version>/namespaces/<ns>/<kind>/<name>`. */
export function configNameOf(path: string | undefined): string | undefined {
  const match = /\/namespaces\/([^/]+)\/[^/]+\/([^/]+)$/.exec(path ?? '');
  return match ? `${match[2]}.${match[1]}` : undefined;
}
