/**
 * Test and benchmark support: a client sidecar and a server sidecar (embedded data planes on
 * their own loopback pod addresses) with a backend behind the server, configured with the
 * shapes the daemon generates for mutual TLS. Not exported from index.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newNopLogger } from '../../controllers/runtime/index.js';
import { newTestAuthority } from '../../ca/testing/test-authority.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../xds/envoy/index.js';
import { keyResources, newConfigState, type ConfigState } from '../config-state.js';
import { newEmbeddedDataPlane, type EmbeddedDataPlane } from '../embedded-data-plane.js';
import type { SecretSet } from '../sds-subscriber.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const TLS_CONTEXT = {
  tls_certificate_sds_secret_configs: [{ name: 'default' }],
  combined_validation_context: { default_validation_context: { match_subject_alt_names: [{ prefix: 'spiffe://cluster.local/' }] }, validation_context_sds_secret_config: { name: 'ROOTCA' } },
};
export const SERVER_CLUSTER = 'outbound|8000||httpbin.bar.svc.cluster.local';
export const SERVER_PORT = 8000;

export type ServerMode = 'STRICT' | 'PERMISSIVE';

/** The server sidecar's `virtualInbound`: a TLS chain (and a plain one in PERMISSIVE) on port 8000, with extra HTTP filters before the router. */
export function serverListeners(mode: ServerMode, httpFilters: readonly object[] = []): Record<string, unknown>[] {
  const hcm = {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM,
      stat_prefix: 'inbound_0.0.0.0_8000',
      route_config: { name: 'inbound|8000||', virtual_hosts: [{ name: 'inbound|http|8000', domains: ['*'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: 'inbound|8000||' } }] }] },
      http_filters: [...httpFilters, ROUTER],
      forward_client_cert_details: 'APPEND_FORWARD',
      set_current_client_cert_details: { subject: true, dns: true, uri: true },
      normalize_path: true,
    },
  };
  const tlsChain = {
    name: '0.0.0.0_8000',
    filter_chain_match: { destination_port: SERVER_PORT, transport_protocol: 'tls' },
    transport_socket: {
      name: 'envoy.transport_sockets.tls',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', require_client_certificate: true, common_tls_context: { ...TLS_CONTEXT, alpn_protocols: ['h2', 'http/1.1'] } },
    },
    filters: [hcm],
  };
  const plainChain = { name: '0.0.0.0_8000', filter_chain_match: { destination_port: SERVER_PORT, transport_protocol: 'raw_buffer' }, filters: [hcm] };
  return [{ name: 'virtualInbound', address: { socket_address: { address: '0.0.0.0', port_value: 15006 } }, use_original_dst: true, filter_chains: mode === 'STRICT' ? [tlsChain] : [tlsChain, plainChain] }];
}

function applyAll(state: ConfigState, typeUrl: string, resources: Record<string, unknown>[]): void {
  const result = state.apply(typeUrl, '1', keyResources(typeUrl, resources));
  if (!result.ok) throw new Error(result.error);
}

/** The client sidecar's outbound side for `httpbin.bar:8000`: auto mutual TLS to the server pod. */
function clientConfig(state: ConfigState, serverPod: string): void {
  applyAll(state, CLUSTER_TYPE, [
    {
      name: SERVER_CLUSTER,
      type: 'EDS',
      eds_cluster_config: { service_name: SERVER_CLUSTER },
      transport_socket_matches: [
        {
          name: 'tlsMode-mesh',
          match: { tlsMode: 'mesh' },
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
              sni: 'outbound_.8000_._.httpbin.bar.svc.cluster.local',
              common_tls_context: {
                ...TLS_CONTEXT,
                alpn_protocols: ['h2', 'http/1.1'],
                combined_validation_context: { ...TLS_CONTEXT.combined_validation_context, default_validation_context: { match_subject_alt_names: [{ exact: 'spiffe://cluster.local/ns/bar/sa/httpbin' }] } },
              },
            },
          },
        },
        { name: 'tlsMode-disabled', match: {}, transport_socket: { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } } },
      ],
    },
    { name: 'PassthroughCluster', type: 'ORIGINAL_DST' },
  ]);
  applyAll(state, ENDPOINT_TYPE, [
    {
      cluster_name: SERVER_CLUSTER,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: serverPod, port_value: SERVER_PORT } } }, metadata: { filter_metadata: { 'envoy.transport_socket_match': { tlsMode: 'mesh' } } } }] }],
    },
  ]);
  applyAll(state, LISTENER_TYPE, [
    {
      name: '0.0.0.0_8000',
      address: { socket_address: { address: '0.0.0.0', port_value: SERVER_PORT } },
      bind_to_port: { value: false },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM, stat_prefix: 'outbound_0.0.0.0_8000', rds: { route_config_name: '8000' }, http_filters: [ROUTER], forward_client_cert_details: 'SANITIZE' } }] }],
    },
    { name: 'virtualOutbound', address: { socket_address: { address: '0.0.0.0', port_value: 15001 } }, use_original_dst: true, filter_chains: [] },
  ]);
  applyAll(state, ROUTE_TYPE, [
    {
      name: '8000',
      virtual_hosts: [
        { name: 'httpbin.bar.svc.cluster.local:8000', domains: ['httpbin.bar.svc.cluster.local', 'httpbin.bar.svc.cluster.local:8000', 'httpbin.bar', 'httpbin.bar:8000'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: SERVER_CLUSTER } }] },
      ],
    },
  ]);
}

export interface TwoSidecars {
  readonly serverState: ConfigState;
  readonly serverPlane: EmbeddedDataPlane;
  readonly clientPlane: EmbeddedDataPlane;
  /** `http://<client pod>:<outbound port>`: the client sidecar's HTTP proxy. */
  readonly proxyUrl: string;
  /** `http://<server app>:8000`: the backend without sidecars. */
  readonly directUrl: string;
  readonly serverPod: string;
  /** Issues a workload certificate's secrets (for SAN tests). */
  secretsFor(identity: string): SecretSet;
  close(): Promise<void>;
}

export interface TwoSidecarsOptions {
  /** Loopback octet pair distinguishing fixtures that run in parallel. */
  readonly subnet: number;
  readonly mode?: ServerMode;
  readonly serverHttpFilters?: readonly object[];
}

export async function startTwoSidecars(options: TwoSidecarsOptions): Promise<TwoSidecars> {
  const serverPod = `127.${options.subnet}.1.2`;
  const serverApp = `127.${options.subnet}.2.2`;
  const clientPod = `127.${options.subnet}.1.1`;
  const authority = await newTestAuthority('cluster.local');
  const secretsFor = (identity: string): SecretSet => {
    const { key, certPem } = authority.workload(identity);
    return {
      certificates: new Map([['default', { certificateChain: certPem, privateKey: key.export({ format: 'pem', type: 'pkcs8' }).toString() }]]),
      trustedCas: new Map([['ROOTCA', authority.rootPem]]),
    };
  };
  const backend: Server = createServer(async (req, res) => {
    // `/delay/<ms>` answers late: a request in flight while the proxies drain.
    const delay = /^\/delay\/(\d+)$/.exec(req.url ?? '')?.[1];
    if (delay) await new Promise((resolve) => setTimeout(resolve, Number(delay)));
    const body = JSON.stringify({ headers: req.headers, url: req.url });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => backend.listen(SERVER_PORT, serverApp, resolve));

  const serverState = newConfigState();
  applyAll(serverState, LISTENER_TYPE, serverListeners(options.mode ?? 'STRICT', options.serverHttpFilters));
  applyAll(serverState, CLUSTER_TYPE, [{ name: 'inbound|8000||', type: 'ORIGINAL_DST' }]);
  const serverSecrets = secretsFor('spiffe://cluster.local/ns/bar/sa/httpbin');
  const serverPlane = newEmbeddedDataPlane({ state: serverState, secrets: () => serverSecrets, podAddress: serverPod, inboundPorts: [SERVER_PORT], appAddress: serverApp, log: newNopLogger('dataplane') });

  const clientState = newConfigState();
  clientConfig(clientState, serverPod);
  const clientSecrets = secretsFor('spiffe://cluster.local/ns/foo/sa/sleep');
  const clientPlane = newEmbeddedDataPlane({ state: clientState, secrets: () => clientSecrets, podAddress: clientPod, outboundPort: 0, log: newNopLogger('dataplane') });
  await Promise.all([serverPlane.start(), clientPlane.start()]);
  const outbound = clientPlane.addresses().get('outbound') as AddressInfo;
  return {
    serverState,
    serverPlane,
    clientPlane,
    proxyUrl: `http://${clientPod}:${outbound.port}`,
    directUrl: `http://${serverApp}:${SERVER_PORT}`,
    serverPod,
    secretsFor,
    async close() {
      await Promise.all([serverPlane.stop(), clientPlane.stop()]);
      backend.closeAllConnections();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    },
  };
}
