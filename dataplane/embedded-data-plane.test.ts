import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl as curlBody } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources, type ConfigState } from './config-state.js';
import { newAdminServer, type AdminServer } from './admin-server.js';
import { newEnvoyLoggers } from './admin-loggers.js';
import { serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

let mesh: TwoSidecars;
let admin: AdminServer;
let adminPort: number;

async function curl(args: string[]): Promise<{ code: string; exit: number }> {
  const result = await curlBody(args);
  return { code: result.code, exit: result.exit };
}

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: 61 });
  admin = newAdminServer({
    state: mesh.serverState,
    stats: mesh.serverPlane.stats,
    isReady: () => true,
    loggers: newEnvoyLoggers('warning', () => undefined),
    bootstrap: { node: { id: 'sidecar~127.0.61.2~server.default~default.svc.cluster.local' } },
    secrets: () => undefined,
    addresses: () => mesh.serverPlane.addresses(),
    drain: (inboundOnly) => void mesh.serverPlane.drain(0, { inboundOnly }),
  });
  adminPort = await admin.listen('127.0.0.1', 0);
});

afterAll(async () => {
  await Promise.all([mesh?.close(), admin?.close()]);
});

const proxy = (): string => mesh.proxyUrl;
const SERVER_POD = '127.61.1.2';
const serverState = (): ConfigState => mesh.serverState;

describe('embedded data plane with the real curl', () => {
  test('meshed client → STRICT server: mutual TLS, XFCC appended with both identities, forged XFCC stripped', async () => {
    const result = await curlBody(['-x', proxy(), '-H', 'X-Forwarded-Client-Cert: By=forged', 'http://httpbin.bar:8000/headers']);
    expect(result.code).toBe('200');
    const headers = (JSON.parse(result.body) as { headers: Record<string, string> }).headers;
    expect(headers['x-forwarded-client-cert']).toMatch(
      /^By=spiffe:\/\/cluster\.local\/ns\/bar\/sa\/httpbin;Hash=[0-9a-f]{64};Subject="[^"]*";URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/,
    );
    expect(headers['host']).toBe('httpbin.bar:8000');
  });

  test('unmeshed plain text to a STRICT port is reset: curl code 000, exit 56', async () => {
    const result = await curl([`http://${SERVER_POD}:8000/ip`]);
    expect(result).toMatchObject({ code: '000', exit: 56 });
  });

  test('PERMISSIVE: plain text is served (no XFCC), and mutual TLS still works', async () => {
    const applied = serverState().apply(LISTENER_TYPE, '2', keyResources(LISTENER_TYPE, serverListeners('PERMISSIVE')));
    expect(applied).toEqual({ ok: true });
    const plain = await curlBody([`http://${SERVER_POD}:8000/headers`]);
    expect(plain.code).toBe('200');
    expect((JSON.parse(plain.body) as { headers: Record<string, string> }).headers['x-forwarded-client-cert']).toBeUndefined();
    expect((await curl(['-x', proxy(), 'http://httpbin.bar:8000/ip'])).code).toBe('200');
    // HTTP/2 with prior knowledge: the sniffed preface goes to the HTTP/2 connection manager.
    const h2 = await curlBody(['--http2-prior-knowledge', '-sS', `http://${SERVER_POD}:8000/headers`]);
    expect(h2.code).toBe('200');
    expect((JSON.parse(h2.body) as { headers: Record<string, string> }).headers['host']).toBe(`${SERVER_POD}:8000`);
  });

  test('a config the data plane cannot implement is refused, naming the field, and the last good one serves', async () => {
    const rejected = serverState().apply(
      LISTENER_TYPE,
      '3',
      keyResources(LISTENER_TYPE, [
        {
          name: 'virtualInbound',
          listener_filters: [
            {
              name: 'envoy.filters.listener.proxy_protocol',
              typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol' },
            },
          ],
        },
      ]),
    );
    expect(rejected).toMatchObject({ ok: false, error: expect.stringContaining('listener_filters[0] (envoy.filters.listener.proxy_protocol)') });
    expect((await curl([`http://${SERVER_POD}:8000/ip`])).code).toBe('200');
  });

  test('the admin API shows the rejection and the counters', async () => {
    type Dump = {
      configs: {
        '@type': string;
        version_info?: string;
        dynamic_listeners?: { name: string; error_state?: { details: string } }[];
        dynamic_endpoint_configs?: unknown[];
      }[];
    };
    const dump = (await (await fetch(`http://127.0.0.1:${adminPort}/config_dump`)).json()) as Dump;
    expect(dump.configs.map((c) => c['@type'].split('.').pop())).toEqual([
      'BootstrapConfigDump',
      'ClustersConfigDump',
      'ListenersConfigDump',
      'RoutesConfigDump',
      'SecretsConfigDump',
    ]);
    const listeners = dump.configs.find((c) => c['@type'].endsWith('ListenersConfigDump'));
    expect(listeners?.version_info).toBe('2');
    expect(listeners?.dynamic_listeners?.[0]?.error_state?.details).toContain('proxy_protocol');
    const withEds = (await (await fetch(`http://127.0.0.1:${adminPort}/config_dump?include_eds`)).json()) as Dump;
    expect(withEds.configs.map((c) => c['@type'].split('.').pop())).toContain('EndpointsConfigDump');
    const names = (await (await fetch(`http://127.0.0.1:${adminPort}/config_dump?resource=dynamic_active_clusters&mask=cluster.name`)).json()) as {
      configs: { '@type': string; cluster: { name: string } }[];
    };
    expect(names.configs.length).toBeGreaterThan(0);
    expect(
      names.configs.every(
        (c) => c['@type'] === 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.DynamicCluster' && Object.keys(c.cluster).join() === 'name',
      ),
    ).toBe(true);
    const clusters = (await (await fetch(`http://127.0.0.1:${adminPort}/clusters?format=json`)).json()) as { cluster_statuses: { name: string }[] };
    expect(clusters.cluster_statuses.map((c) => c.name)).toEqual(names.configs.map((c) => c.cluster.name));
    const loggers = await fetch(`http://127.0.0.1:${adminPort}/logging?rbac=debug`, { method: 'POST' });
    expect(loggers.status).toBe(200);
    expect(await loggers.text()).toMatch(/^active loggers:\n {2}admin: [a-z]+\n[^]* {2}rbac: debug\n/);
    expect((await fetch(`http://127.0.0.1:${adminPort}/logging?nosuch=debug`, { method: 'POST' })).status).toBe(404);
    const prometheus = await (await fetch(`http://127.0.0.1:${adminPort}/stats/prometheus`)).text();
    expect(prometheus).toMatch(/envoy_listener_no_filter_chain_match [1-9]/);
    expect((await fetch(`http://127.0.0.1:${adminPort}/nothing`)).status).toBe(404);
  });
});

// Last: it drains the server's sidecar for good.
describe('graceful shutdown', () => {
  test('a drain stops accepting on the inbound ports while a request in flight completes', async () => {
    const before = mesh.serverPlane.stats.get('http.downstream_rq_total');
    const inFlight = curlBody(['-x', proxy(), 'http://httpbin.bar:8000/delay/500']);
    await waitFor(() => mesh.serverPlane.stats.get('http.downstream_rq_total') > before, {
      timeoutMs: 3_000,
      description: 'the request at the server sidecar',
    });
    const drained = await fetch(`http://127.0.0.1:${adminPort}/drain_listeners?inboundonly&graceful`, { method: 'POST' });
    expect(drained.status).toBe(200);
    await waitFor(async () => (await curl([`http://${SERVER_POD}:8000/ip`])).exit === 7, { timeoutMs: 2_000, description: 'inbound port closed' });
    const finished = await inFlight;
    expect(finished.code).toBe('200');
    expect(finished.body).toContain('/delay/500');
  });
});
