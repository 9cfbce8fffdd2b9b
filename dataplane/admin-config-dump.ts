import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE } from '../xds/envoy/index.js';
import type { ConfigSnapshot } from './config-state.js';
import type { SecretSet } from './sds-subscriber.js';

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';
const BOOTSTRAP_TYPE = 'type.googleapis.com/envoy.config.bootstrap.v3.Bootstrap';
/** What Envoy writes in place of key material: `[redacted]`, base64 in `inline_bytes`. */
const REDACTED_BYTES = Buffer.from('[redacted]').toString('base64');

type Json = Record<string, unknown>;

export interface ConfigDumpInputs {
  readonly bootstrap: Json;
  readonly snapshot: ConfigSnapshot;
  readonly secrets: SecretSet | undefined;
  /** When each type URL (and the bootstrap, under `bootstrap`) was last accepted. */
  readonly updatedAt: ReadonlyMap<string, Date>;
  /** The last rejected update of each type URL: Envoy's `error_state` on that type's entries. */
  readonly rejections: ReadonlyMap<string, string>;
}

export interface ConfigDumpQuery {
  /** `include_eds`: the EndpointsConfigDump too. */
  readonly includeEds: boolean;
  /** `resource=<field>`: only the items of that repeated field of the dumps (`dynamic_active_clusters`…). */
  readonly resource?: string;
  /** `mask=<path,…>`: only these fields of each item (dotted paths). */
  readonly mask?: readonly string[];
}

/**
 * Envoy's `/config_dump`, in its order (bootstrap, clusters, endpoints with `include_eds`,
 * listeners, routes, secrets) and shapes, from the data plane's accepted snapshot; key material
 * redacted as Envoy does. `resource` and `mask` narrow it as Envoy's query parameters do.
 */
export function envoyConfigDump(inputs: ConfigDumpInputs, query: ConfigDumpQuery): { configs: Json[] } {
  const { snapshot } = inputs;
  const time = (typeUrl: string): string => (inputs.updatedAt.get(typeUrl) ?? new Date(0)).toISOString();
  const version = (typeUrl: string): string => snapshot.versions.get(typeUrl) ?? '';
  const typed = (typeUrl: string, resource: object): Json => ({ '@type': typeUrl, ...resource });
  const rejected = (typeUrl: string): Json => {
    const details = inputs.rejections.get(typeUrl);
    return details === undefined ? {} : { error_state: { details } };
  };
  const { resources } = snapshot;
  const configs: Json[] = [
    { '@type': `${ADMIN}BootstrapConfigDump`, bootstrap: { '@type': BOOTSTRAP_TYPE, ...inputs.bootstrap }, last_updated: time('bootstrap') },
    {
      '@type': `${ADMIN}ClustersConfigDump`,
      version_info: version(CLUSTER_TYPE),
      dynamic_active_clusters: [...resources.clusters.values()].map((cluster) => ({
        version_info: version(CLUSTER_TYPE),
        cluster: typed(CLUSTER_TYPE, cluster),
        last_updated: time(CLUSTER_TYPE),
        ...rejected(CLUSTER_TYPE),
      })),
    },
    ...(query.includeEds
      ? [
          {
            '@type': `${ADMIN}EndpointsConfigDump`,
            dynamic_endpoint_configs: [...resources.endpoints.values()].map((assignment) => ({
              version_info: version(ENDPOINT_TYPE),
              endpoint_config: typed(ENDPOINT_TYPE, assignment),
              last_updated: time(ENDPOINT_TYPE),
            })),
          },
        ]
      : []),
    {
      '@type': `${ADMIN}ListenersConfigDump`,
      version_info: version(LISTENER_TYPE),
      dynamic_listeners: resources.listeners.map((listener) => ({
        name: (listener as { name?: string }).name,
        active_state: { version_info: version(LISTENER_TYPE), listener: typed(LISTENER_TYPE, listener), last_updated: time(LISTENER_TYPE) },
        ...rejected(LISTENER_TYPE),
      })),
    },
    {
      '@type': `${ADMIN}RoutesConfigDump`,
      dynamic_route_configs: [...resources.routes.values()].map((route) => ({
        version_info: version(ROUTE_TYPE),
        route_config: typed(ROUTE_TYPE, route),
        last_updated: time(ROUTE_TYPE),
      })),
    },
    { '@type': `${ADMIN}SecretsConfigDump`, dynamic_active_secrets: secretsOf(inputs.secrets, time(SECRET_TYPE)) },
  ];
  if (query.resource === undefined) return { configs };
  const field = query.resource;
  const items = configs.flatMap((config) =>
    Array.isArray(config[field]) ? (config[field] as Json[]).map((item) => ({ '@type': `${String(config['@type'])}.${itemTypeOf(field)}`, ...item })) : [],
  );
  return { configs: query.mask ? items.map((item) => masked(item, query.mask ?? [])) : items };
}

function secretsOf(secrets: SecretSet | undefined, lastUpdated: string): Json[] {
  if (!secrets) return [];
  const certificates = [...secrets.certificates].map(([name, material]) => ({
    name,
    version_info: lastUpdated,
    last_updated: lastUpdated,
    secret: {
      '@type': SECRET_TYPE,
      name,
      tls_certificate: {
        certificate_chain: { inline_bytes: Buffer.from(material.certificateChain).toString('base64') },
        private_key: { inline_bytes: REDACTED_BYTES },
      },
    },
  }));
  const roots = [...secrets.trustedCas].map(([name, bundle]) => ({
    name,
    version_info: lastUpdated,
    last_updated: lastUpdated,
    secret: { '@type': SECRET_TYPE, name, validation_context: { trusted_ca: { inline_bytes: Buffer.from(bundle).toString('base64') } } },
  }));
  return [...certificates, ...roots];
}

/** Envoy names each item's type after its dump and field: `ClustersConfigDump.DynamicCluster`. */
function itemTypeOf(field: string): string {
  const names: Record<string, string> = {
    dynamic_active_clusters: 'DynamicCluster',
    dynamic_warming_clusters: 'DynamicCluster',
    static_clusters: 'StaticCluster',
    dynamic_listeners: 'DynamicListener',
    static_listeners: 'StaticListener',
    dynamic_route_configs: 'DynamicRouteConfig',
    static_route_configs: 'StaticRouteConfig',
    dynamic_endpoint_configs: 'DynamicEndpointConfig',
    dynamic_active_secrets: 'DynamicSecret',
  };
  return names[field] ?? field;
}

function masked(item: Json, paths: readonly string[]): Json {
  const out: Json = { '@type': item['@type'] };
  for (const path of paths) {
    const steps = path.split('.');
    let source: unknown = item;
    for (const step of steps) source = typeof source === 'object' && source !== null ? (source as Json)[step] : undefined;
    if (source === undefined) continue;
    let target = out;
    steps.forEach((step, i) => {
      if (i === steps.length - 1) target[step] = source;
      else target = (target[step] ??= {}) as Json;
    });
  }
  return out;
}
