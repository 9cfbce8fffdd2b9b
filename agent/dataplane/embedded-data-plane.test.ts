import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../../controllers/runtime/index.js';
import { newTestAuthority } from '../../ca/test-authority.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../xds/type-urls.js';
import { keyResources, newConfigState, type ConfigState } from './config-state.js';
import { newAdminServer, type AdminServer } from './admin-server.js';
import { newEmbeddedDataPlane, type EmbeddedDataPlane } from './embedded-data-plane.js';
import type { SecretSet } from './sds-subscriber.js';

const run = promisify(execFile);

const SERVER_POD = '127.0.61.2';
const SERVER_APP = '127.0.62.2';
const CLIENT_POD = '127.0.61.1';
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const TLS_CONTEXT = {
  tls_certificate_sds_secret_configs: [{ name: 'default' }],
  combined_validation_context: { default_validation_context: { match_subject_alt_names: [{ prefix: 'spiffe://cluster.local/' }] }, validation_context_sds_secret_config: { name: 'ROOTCA' } },
};

function serverListeners(mode: 'STRICT' | 'PERMISSIVE'): Record<string, unknown>[] {
  const hcm = {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM,
      stat_prefix: 'inbound_0.0.0.0_8000',
      route_config: { name: 'inbound|8000||', virtual_hosts: [{ name: 'inbound|http|8000', domains: ['*'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: 'inbound|8000||' } }] }] },
      http_filters: [ROUTER],
      forward_client_cert_details: 'APPEND_FORWARD',
      set_current_client_cert_details: { subject: true, dns: true, uri: true },
    },
  };
  const tlsChain = {
    name: '0.0.0.0_8000',
    filter_chain_match: { destination_port: 8000, transport_protocol: 'tls' },
    transport_socket: { name: 'envoy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', require_client_certificate: true, common_tls_context: { ...TLS_CONTEXT, alpn_protocols: ['h2', 'http/1.1'] } } },
    filters: [hcm],
  };
  const plainChain = { name: '0.0.0.0_8000', filter_chain_match: { destination_port: 8000, transport_protocol: 'raw_buffer' }, filters: [hcm] };
  return [{ name: 'virtualInbound', address: { socket_address: { address: '0.0.0.0', port_value: 15006 } }, use_original_dst: true, filter_chains: mode === 'STRICT' ? [tlsChain] : [tlsChain, plainChain] }];
}

const CLUSTER = 'outbound|8000||httpbin.bar.svc.cluster.local';

function clientConfig(state: ConfigState): void {
  const apply = (typeUrl: string, resources: Record<string, unknown>[]): void => {
    const result = state.apply(typeUrl, '1', keyResources(typeUrl, resources));
    if (!result.ok) throw new Error(result.error);
  };
  apply(CLUSTER_TYPE, [
    {
      name: CLUSTER,
      type: 'EDS',
      eds_cluster_config: { service_name: CLUSTER },
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
  apply(ENDPOINT_TYPE, [
    {
      cluster_name: CLUSTER,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: SERVER_POD, port_value: 8000 } } }, metadata: { filter_metadata: { 'envoy.transport_socket_match': { tlsMode: 'mesh' } } } }] }],
    },
  ]);
  apply(LISTENER_TYPE, [
    {
      name: '0.0.0.0_8000',
      address: { socket_address: { address: '0.0.0.0', port_value: 8000 } },
      bind_to_port: { value: false },
      filter_chains: [{ filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: { '@type': HCM, stat_prefix: 'outbound_0.0.0.0_8000', rds: { route_config_name: '8000' }, http_filters: [ROUTER], forward_client_cert_details: 'SANITIZE' } }] }],
    },
    { name: 'virtualOutbound', address: { socket_address: { address: '0.0.0.0', port_value: 15001 } }, use_original_dst: true, filter_chains: [] },
  ]);
  apply(ROUTE_TYPE, [
    { name: '8000', virtual_hosts: [{ name: 'httpbin.bar.svc.cluster.local:8000', domains: ['httpbin.bar.svc.cluster.local', 'httpbin.bar.svc.cluster.local:8000', 'httpbin.bar', 'httpbin.bar:8000'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: CLUSTER } }] }] },
  ]);
}

let backend: Server;
let serverState: ConfigState;
let serverPlane: EmbeddedDataPlane;
let clientPlane: EmbeddedDataPlane;
let admin: AdminServer;
let adminPort: number;

/** The real curl: status code (000 when there was no response), exit status. */
async function curl(args: string[]): Promise<{ code: string; exit: number }> {
  const result = await curlBody(args);
  return { code: result.code, exit: result.exit };
}

async function curlBody(args: string[]): Promise<{ code: string; exit: number; body: string }> {
  try {
    const { stdout } = await run('curl', ['-sS', '-m', '5', '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });
    const cut = stdout.lastIndexOf('\n');
    return { body: stdout.slice(0, cut), code: stdout.slice(cut + 1), exit: 0 };
  } catch (error) {
    const failed = error as { stdout: string; code: number };
    return { code: failed.stdout.slice(failed.stdout.lastIndexOf('\n') + 1), exit: failed.code, body: failed.stdout };
  }
}

beforeAll(async () => {
  const authority = await newTestAuthority('cluster.local');
  const secretsFor = (identity: string): SecretSet => {
    const { key, certPem } = authority.workload(identity);
    return {
      certificates: new Map([['default', { certificateChain: certPem, privateKey: key.export({ format: 'pem', type: 'pkcs8' }).toString() }]]),
      trustedCas: new Map([['ROOTCA', authority.rootPem]]),
    };
  };
  backend = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ headers: req.headers, url: req.url }));
  });
  await new Promise<void>((resolve) => backend.listen(8000, SERVER_APP, resolve));

  serverState = newConfigState();
  const loaded = serverState.apply(LISTENER_TYPE, '1', keyResources(LISTENER_TYPE, serverListeners('STRICT')));
  if (!loaded.ok) throw new Error(loaded.error);
  serverState.apply(CLUSTER_TYPE, '1', keyResources(CLUSTER_TYPE, [{ name: 'inbound|8000||', type: 'ORIGINAL_DST' }]));
  const serverSecrets = secretsFor('spiffe://cluster.local/ns/bar/sa/httpbin');
  serverPlane = newEmbeddedDataPlane({ state: serverState, secrets: () => serverSecrets, podAddress: SERVER_POD, inboundPorts: [8000], appAddress: SERVER_APP, log: newNopLogger('dataplane') });

  const clientState = newConfigState();
  clientConfig(clientState);
  const clientSecrets = secretsFor('spiffe://cluster.local/ns/foo/sa/sleep');
  clientPlane = newEmbeddedDataPlane({ state: clientState, secrets: () => clientSecrets, podAddress: CLIENT_POD, outboundPort: 0, log: newNopLogger('dataplane') });
  await Promise.all([serverPlane.start(), clientPlane.start()]);
  admin = newAdminServer({ state: serverState, stats: serverPlane.stats, isReady: () => true, addresses: () => serverPlane.addresses() });
  adminPort = await admin.listen('127.0.0.1', 0);
});

afterAll(async () => {
  await Promise.all([serverPlane?.stop(), clientPlane?.stop(), admin?.close()]);
  backend?.close();
});

const proxy = (): string => `http://${CLIENT_POD}:${(clientPlane.addresses().get('outbound') as AddressInfo).port}`;

describe('embedded data plane with the real curl', () => {
  test('meshed client → STRICT server: mutual TLS, XFCC appended with both identities, forged XFCC stripped', async () => {
    const result = await curlBody(['-x', proxy(), '-H', 'X-Forwarded-Client-Cert: By=forged', 'http://httpbin.bar:8000/headers']);
    expect(result.code).toBe('200');
    const headers = (JSON.parse(result.body) as { headers: Record<string, string> }).headers;
    expect(headers['x-forwarded-client-cert']).toMatch(/^By=spiffe:\/\/cluster\.local\/ns\/bar\/sa\/httpbin;Hash=[0-9a-f]{64};Subject="[^"]*";URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/);
    expect(headers['host']).toBe('httpbin.bar:8000');
  });

  test('unmeshed plain text to a STRICT port is reset: curl code 000, exit 56', async () => {
    const result = await curl([`http://${SERVER_POD}:8000/ip`]);
    expect(result).toMatchObject({ code: '000', exit: 56 });
  });

  test('PERMISSIVE: plain text is served (no XFCC), and mutual TLS still works', async () => {
    const applied = serverState.apply(LISTENER_TYPE, '2', keyResources(LISTENER_TYPE, serverListeners('PERMISSIVE')));
    expect(applied).toEqual({ ok: true });
    const plain = await curlBody([`http://${SERVER_POD}:8000/headers`]);
    expect(plain.code).toBe('200');
    expect((JSON.parse(plain.body) as { headers: Record<string, string> }).headers['x-forwarded-client-cert']).toBeUndefined();
    expect((await curl(['-x', proxy(), 'http://httpbin.bar:8000/ip'])).code).toBe('200');
  });

  test('a config the data plane cannot implement is refused, naming the field, and the last good one serves', async () => {
    const rejected = serverState.apply(LISTENER_TYPE, '3', keyResources(LISTENER_TYPE, [{ name: 'virtualInbound', listener_filters: [{ name: 'envoy.filters.listener.proxy_protocol', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol' } }] }]));
    expect(rejected).toMatchObject({ ok: false, error: expect.stringContaining('listener_filters[0] (envoy.filters.listener.proxy_protocol)') });
    expect((await curl([`http://${SERVER_POD}:8000/ip`])).code).toBe('200');
  });

  test('the admin API shows the rejection and the counters', async () => {
    const dump = (await (await fetch(`http://127.0.0.1:${adminPort}/config_dump`)).json()) as { rejected: Record<string, string>; versions: Record<string, string> };
    expect(dump.rejected[LISTENER_TYPE]).toContain('proxy_protocol');
    expect(dump.versions[LISTENER_TYPE]).toBe('2');
    const prometheus = await (await fetch(`http://127.0.0.1:${adminPort}/stats/prometheus`)).text();
    expect(prometheus).toMatch(/envoy_listener_no_filter_chain_match [1-9]/);
    expect((await fetch(`http://127.0.0.1:${adminPort}/nothing`)).status).toBe(404);
  });
});
