import { effectivePathNormalization, type MeshConfig } from '../../crds/index.js';
import { jsonToStruct } from '../envoy/struct-json.js';
import type { TypedFilter } from '../model/security-filters.js';

export const HCM_FILTER = 'envoy.filters.network.http_connection_manager';
export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const TCP_PROXY_FILTER = 'envoy.filters.network.tcp_proxy';
export const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
export const ROUTER_FILTER: TypedFilter = {
  name: 'envoy.filters.http.router',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
};
export const ADS_SOURCE = { ads: {}, resource_api_version: 'V3' } as const;

const TYPED_STRUCT = 'type.googleapis.com/xds.type.v3.TypedStruct';

/**
 * The mesh's telemetry for a proxy that can compute it (the reference ships these filters in its
 * own Envoy build): the peer metadata exchange (`x-mesh-peer-metadata` headers) and the standard
 * request metrics, reported by the server (`inbound`), the client (`outbound`) or a gateway.
 * Both are optional, so a stock Envoy without them ignores them; the embedded data plane computes
 * the same metrics itself.
 */
export function telemetryFilters(reporter: 'inbound' | 'outbound' | 'gateway'): TypedFilter[] {
  const discovery = [{ mesh_header: {} }];
  return [
    {
      name: 'mesh.metadata_exchange',
      is_optional: true,
      typed_config: {
        '@type': TYPED_STRUCT,
        type_url: 'type.googleapis.com/mesh.http.peer_metadata.Config',
        value: jsonToStruct(
          reporter === 'inbound'
            ? { downstream_discovery: discovery, downstream_propagation: discovery }
            : { upstream_discovery: discovery, upstream_propagation: discovery },
        ),
      },
    },
    {
      name: 'mesh.stats',
      is_optional: true,
      typed_config: {
        '@type': TYPED_STRUCT,
        type_url: 'type.googleapis.com/stats.PluginConfig',
        value: jsonToStruct({ reporter: reporter === 'inbound' ? 'SERVER' : reporter === 'gateway' ? 'SERVER_GATEWAY' : 'CLIENT' }),
      },
    },
  ];
}

/** The HCM path options of the mesh config's `pathNormalization` (BASE by default). */
export function pathNormalizationOptions(meshConfig: Pick<MeshConfig, 'pathNormalization'>): Record<string, unknown> {
  switch (effectivePathNormalization(meshConfig)) {
    case 'NONE':
      return {};
    case 'MERGE_SLASHES':
      return { normalize_path: { value: true }, merge_slashes: true };
    case 'DECODE_AND_MERGE_SLASHES':
      return { normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' };
    default:
      return { normalize_path: { value: true } };
  }
}

/** A network filter carrying an HTTP connection manager. */
export function httpConnectionManager(config: Record<string, unknown>): TypedFilter {
  return { name: HCM_FILTER, typed_config: { '@type': HCM_TYPE, ...config } };
}

export function tcpProxy(statPrefix: string, cluster: string): TypedFilter {
  return { name: TCP_PROXY_FILTER, typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: statPrefix, cluster } };
}
