/**
 * Test support: the config a CUSTOM AuthorizationPolicy gives a sidecar, written as the
 * reference's generator writes it (a shadow RBAC filter, DENY, whose policies are the CUSTOM
 * rules, then the ext_authz filter enabled by their metadata), placed into a generated sidecar's
 * listeners, with clusters for the authorization servers; applied through the Envoy protos
 * (strict encode, decode) as it travels. Not exported from index.ts.
 */
import { CLUSTER_TYPE, LISTENER_TYPE, type EnvoyProtos } from '../../xds/envoy/index.js';
import { keyResources, type ConfigState } from '../config-state.js';

const HTTP_RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const NETWORK_RBAC = 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
const HTTP_EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const NETWORK_EXT_AUTHZ = 'type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz';
const UPSTREAM_TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

export const SHADOW_STAT_PREFIX = 'mesh_ext_authz_';
export const SHADOW_METADATA_KEY = `${SHADOW_STAT_PREFIX}shadow_effective_policy_id`;

type Filter = { name: string; typed_config: Record<string, unknown> };

/** The reference's CUSTOM policy name (`policyName`): `mesh-ext-authz-ns[<ns>]-policy[<name>]-rule[<i>]`. */
export function customPolicyName(namespace: string, policy: string, rule: number): string {
  return `mesh-ext-authz-ns[${namespace}]-policy[${policy}]-rule[${rule}]`;
}

/** Envoy's RBAC permission for a CUSTOM rule's `to.operation.paths` (prefixes ending in `*`, else exact). */
export function pathsPermission(paths: readonly string[]): object {
  const matchers = paths.map((path) => ({ url_path: { path: path.endsWith('*') ? { prefix: path.slice(0, -1) } : { exact: path } } }));
  return { and_rules: { rules: [{ or_rules: { rules: matchers } }] } };
}

/** The shadow RBAC filter holding a CUSTOM policy's rules (DENY, never enforced). */
export function customShadowRbac(kind: 'http' | 'network', policies: Readonly<Record<string, object>>): Filter {
  const shadow = {
    action: 'DENY',
    policies: Object.fromEntries(
      Object.entries(policies).map(([name, permission]) => [name, { permissions: [permission], principals: [{ and_ids: { ids: [{ any: true }] } }] }]),
    ),
  };
  return kind === 'http'
    ? { name: 'envoy.filters.http.rbac', typed_config: { '@type': HTTP_RBAC, shadow_rules: shadow, shadow_rules_stat_prefix: SHADOW_STAT_PREFIX } }
    : {
        name: 'envoy.filters.network.rbac',
        typed_config: { '@type': NETWORK_RBAC, stat_prefix: 'tcp.', shadow_rules: shadow, shadow_rules_stat_prefix: SHADOW_STAT_PREFIX },
      };
}

const enabledBy = (filter: string): object => ({ filter, path: [{ key: SHADOW_METADATA_KEY }], value: { string_match: { prefix: 'mesh-ext-authz' } } });

/** `outbound|<port>||<host>`, the cluster a provider's service and port name. */
export function providerCluster(host: string, port: number): string {
  return `outbound|${port}||${host}`;
}

/** An HTTP provider's `http_service` (600 s unless `timeout`, as the reference). */
export function httpService(host: string, port: number, fields: Record<string, unknown> = {}, timeout: object = { seconds: 600 }): object {
  return { http_service: { server_uri: { uri: `http://${host}`, cluster: providerCluster(host, port), timeout }, ...fields } };
}

/** A gRPC provider's `grpc_service`. */
export function grpcService(host: string, port: number, timeout: object = { seconds: 600 }): object {
  return { grpc_service: { envoy_grpc: { cluster_name: providerCluster(host, port), authority: host }, timeout } };
}

/** The HTTP ext_authz filter of a CUSTOM pair: `service` (http_service or grpc_service) and the filter's other fields. */
export function httpExtAuthz(service: object, fields: Record<string, unknown> = {}): Filter {
  return {
    name: 'envoy.filters.http.ext_authz',
    typed_config: {
      '@type': HTTP_EXT_AUTHZ,
      ...service,
      transport_api_version: 'V3',
      filter_enabled_metadata: enabledBy('envoy.filters.http.rbac'),
      ...fields,
    },
  };
}

/** The network ext_authz filter of a CUSTOM pair (gRPC providers only). */
export function networkExtAuthz(service: object, fields: Record<string, unknown> = {}): Filter {
  return {
    name: 'envoy.filters.network.ext_authz',
    typed_config: {
      '@type': NETWORK_EXT_AUTHZ,
      stat_prefix: 'tcp.',
      ...service,
      transport_api_version: 'V3',
      filter_enabled_metadata: enabledBy('envoy.filters.network.rbac'),
      ...fields,
    },
  };
}

/** Mesh mutual TLS to an authorizer: the workload certificate (SDS `default`), the mesh's roots, its SPIFFE identity checked. */
export function meshMutualTls(identity: string, sni: string): object {
  const sds = (name: string): object => ({ name, sds_config: { ads: {}, resource_api_version: 'V3' } });
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': UPSTREAM_TLS,
      common_tls_context: {
        alpn_protocols: ['http/1.1'],
        tls_certificate_sds_secret_configs: [sds('default')],
        combined_validation_context: {
          default_validation_context: { match_subject_alt_names: [{ exact: identity }] },
          validation_context_sds_secret_config: sds('ROOTCA'),
        },
      },
      sni,
    },
  };
}

/** A STATIC cluster with one endpoint (an authorization server), plain or over `transportSocket`. */
export function authorizerCluster(name: string, address: string, port: number, transportSocket?: object): Record<string, unknown> {
  return {
    name,
    type: 'STATIC',
    connect_timeout: { seconds: 1 },
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address, port_value: port } } } }] }] },
    ...(transportSocket ? { transport_socket: transportSocket } : {}),
  };
}

type Chain = { filter_chain_match?: { destination_port?: { value: number } | number }; filters: Filter[] };

function portOf(chain: Chain): number | undefined {
  const port = chain.filter_chain_match?.destination_port;
  return typeof port === 'object' ? port.value : port;
}

/**
 * The generated listeners with CUSTOM filters in place: `http` into the HTTP connection manager of
 * `virtualInbound`'s chains on `httpPort`, after the metadata exchange (before authentication, as
 * the reference); `tcp` before `tcp_proxy` on the chains of its port.
 */
export function withCustomFilters(
  listeners: readonly Record<string, unknown>[],
  custom: { httpPort?: number; http?: Filter[]; tcp?: { port: number; filters: Filter[] } },
): Record<string, unknown>[] {
  const copy = structuredClone(listeners) as Record<string, unknown>[];
  const inbound = copy.find((listener) => listener['name'] === 'virtualInbound') as { filter_chains: Chain[] } | undefined;
  if (!inbound) throw new Error('no virtualInbound listener');
  for (const chain of inbound.filter_chains) {
    const port = portOf(chain);
    if (custom.http && port === custom.httpPort) {
      const hcm = chain.filters[chain.filters.length - 1]?.typed_config as { http_filters: Filter[] };
      const exchange = hcm.http_filters.findIndex((filter) => filter.name === 'mesh.metadata_exchange');
      hcm.http_filters.splice(exchange + 1, 0, ...structuredClone(custom.http));
    }
    if (custom.tcp && port === custom.tcp.port) chain.filters.unshift(...structuredClone(custom.tcp.filters));
  }
  return copy;
}

/** Applies resources of one type as the subscriber would after the wire: through the strict encoder and back. Throws on a NACK. */
export function applyThroughXds(
  state: ConfigState,
  protos: EnvoyProtos,
  typeUrl: string,
  resources: readonly Record<string, unknown>[],
  version: string,
): void {
  const decoded = resources.map((resource) => protos.decodeAny(protos.encodeAny(typeUrl, resource)));
  const result = state.apply(typeUrl, version, keyResources(typeUrl, decoded));
  if (!result.ok) throw new Error(`the data plane rejects ${typeUrl}: ${result.error}`);
}

/** The sidecar's current clusters plus `extra` (replacing same-named ones), through the wire. */
export function applyClusters(state: ConfigState, protos: EnvoyProtos, extra: readonly Record<string, unknown>[], version: string): void {
  const names = new Set(extra.map((cluster) => cluster['name']));
  const current = [...state.current().resources.clusters.values()].filter((cluster) => !names.has((cluster as { name?: string }).name)) as unknown as Record<
    string,
    unknown
  >[];
  applyThroughXds(state, protos, CLUSTER_TYPE, [...current, ...extra], version);
}

export function applyListeners(state: ConfigState, protos: EnvoyProtos, listeners: readonly Record<string, unknown>[], version: string): void {
  applyThroughXds(state, protos, LISTENER_TYPE, listeners, version);
}
