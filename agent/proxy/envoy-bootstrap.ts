import type { ProxyIdentity } from './proxy-identity.js';

export interface BootstrapInput {
  readonly identity: ProxyIdentity;
  /** Where the proxy's ADS stream goes: the agent's xDS proxy (`unix:<path>`) or the daemon (`host:port`). */
  readonly xdsAddress: string;
  /** The agent's SDS Unix socket. */
  readonly sdsSocketPath: string;
  /** Where admin, stats and readiness listen (the pod address in local mode, loopback in a pod). */
  readonly listenAddress: string;
  /** MESH_DELTA_XDS. */
  readonly delta: boolean;
  /**
   * Straight to the daemon (PROXY_XDS_VIA_AGENT off): mutual TLS with the workload certificate
   * from SDS `default`, the daemon's certificate checked against this CA file and name.
   */
  readonly xdsTls?: { readonly caFile: string; readonly serverName: string };
  readonly serviceCluster: string;
  readonly metricsPort: number;
}

function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  return { host: address.slice(0, colon).replace(/^\[|\]$/g, '') || '127.0.0.1', port: Number(address.slice(colon + 1)) };
}

const HTTP2_OPTIONS = {
  'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
    '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
    explicit_http_config: { http2_protocol_options: {} },
  },
};

function xdsTransportSocket(tls: NonNullable<BootstrapInput['xdsTls']>): object {
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      sni: tls.serverName,
      common_tls_context: {
        alpn_protocols: ['h2'],
        tls_certificate_sds_secret_configs: [
          {
            name: 'default',
            sds_config: {
              api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'sds-grpc' } }] },
              resource_api_version: 'V3',
            },
          },
        ],
        validation_context: { trusted_ca: { filename: tls.caFile } },
      },
    },
  };
}

/**
 * The bootstrap Envoy would load, as JSON: the node, admin on the proxy admin port, ADS (state
 * of the world or delta) to `xds-grpc`, secrets from `sds-grpc` on the agent's socket, and the
 * Prometheus listener on the metrics port. The embedded data plane reads the same document.
 */
export function buildEnvoyBootstrap(input: BootstrapInput): Record<string, unknown> {
  const { identity } = input;
  const xdsEndpoint = input.xdsAddress.startsWith('unix:')
    ? { pipe: { path: input.xdsAddress.slice('unix:'.length) } }
    : (() => {
        const xds = splitHostPort(input.xdsAddress);
        return { socket_address: { address: xds.host, port_value: xds.port } };
      })();
  return {
    node: { id: identity.nodeId, cluster: input.serviceCluster, metadata: identity.metadata, locality: {} },
    admin: { address: { socket_address: { address: input.listenAddress, port_value: identity.proxyConfig.proxyAdminPort ?? 15000 } } },
    dynamic_resources: {
      ads_config: {
        api_type: input.delta ? 'DELTA_GRPC' : 'GRPC',
        transport_api_version: 'V3',
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }],
      },
      cds_config: { ads: {}, resource_api_version: 'V3' },
      lds_config: { ads: {}, resource_api_version: 'V3' },
    },
    static_resources: {
      clusters: [
        {
          name: 'xds-grpc',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'xds-grpc', endpoints: [{ lb_endpoints: [{ endpoint: { address: xdsEndpoint } }] }] },
          typed_extension_protocol_options: HTTP2_OPTIONS,
          ...(input.xdsTls ? { transport_socket: xdsTransportSocket(input.xdsTls) } : {}),
        },
        {
          name: 'sds-grpc',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'sds-grpc', endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: input.sdsSocketPath } } } }] }] },
          typed_extension_protocol_options: HTTP2_OPTIONS,
        },
        {
          name: 'prometheus_stats',
          type: 'STATIC',
          connect_timeout: '0.250s',
          load_assignment: {
            cluster_name: 'prometheus_stats',
            endpoints: [
              {
                lb_endpoints: [
                  { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: identity.proxyConfig.proxyAdminPort ?? 15000 } } } },
                ],
              },
            ],
          },
        },
      ],
      listeners: [
        {
          name: 'prometheus',
          address: { socket_address: { address: input.listenAddress, port_value: input.metricsPort } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'stats',
                    route_config: {
                      virtual_hosts: [
                        { name: 'backend', domains: ['*'], routes: [{ match: { prefix: '/stats/prometheus' }, route: { cluster: 'prometheus_stats' } }] },
                      ],
                    },
                    http_filters: [
                      { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    },
    layered_runtime: { layers: [{ name: 'global config', static_layer: {} }] },
  };
}

/** MESH_BOOTSTRAP_OVERRIDE: objects merge key by key, anything else replaces. */
export function mergeBootstrap(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = out[key];
    out[key] =
      value !== null && typeof value === 'object' && !Array.isArray(value) && current !== null && typeof current === 'object' && !Array.isArray(current)
        ? mergeBootstrap(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}
