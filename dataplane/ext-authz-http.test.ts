import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { freePort } from '../testing/wait-for.js';
import { startHttpAuthorizer, type HttpAuthorizer } from '../testing/ext-authz/http-authorizer.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../xds/envoy/index.js';
import { newEnvoyLoggers } from './admin-loggers.js';
import { newAdminServer, type AdminServer } from './admin-server.js';
import { curlExchange, type CurlExchange } from './testing/curl-exchange.js';
import {
  applyClusters,
  applyListeners,
  authorizerCluster,
  customPolicyName,
  customShadowRbac,
  httpExtAuthz,
  httpService,
  meshMutualTls,
  pathsPermission,
  providerCluster,
  withCustomFilters,
} from './testing/ext-authz-config.js';
import { serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// The server sidecar of the two-sidecar fixture (PERMISSIVE) with a CUSTOM policy's pair of
// filters in front of its app, calling a real HTTP authorization server (fastify), driven by the
// real curl through the client sidecar (mutual TLS) or straight to the pod.
const SUBNET = 111;
const AUTHZ_HOST = 'ext-authz-http.foo.svc.cluster.local';
const AUTHZ_PORT = 8000;
const AUTHZ_CLUSTER = providerCluster(AUTHZ_HOST, AUTHZ_PORT);
const DOWN_CLUSTER = providerCluster('down.foo.svc.cluster.local', 8000);
const TLS_HOST = 'ext-authz-tls.foo.svc.cluster.local';
const TLS_IDENTITY = 'spiffe://cluster.local/ns/foo/sa/ext-authz';
const INBOUND_CLUSTER = 'inbound|8000||';
/** The CUSTOM rule: these paths are checked, others never are. */
const CHECKED_PATHS = ['/headers', '/anything/*', '/post'];

let protos: EnvoyProtos;
let mesh: TwoSidecars;
let authorizer: HttpAuthorizer;
let tlsAuthorizer: HttpAuthorizer;
let admin: AdminServer;
let adminPort: number;
let version = 0;

/** The server sidecar with the CUSTOM pair: the shadow RBAC filter, then ext_authz with `service` and `fields`. */
function useCustom(fields: Record<string, unknown> = {}, service: object = httpService(AUTHZ_HOST, AUTHZ_PORT)): void {
  const filters = [customShadowRbac('http', { [customPolicyName('bar', 'ext', 0)]: pathsPermission(CHECKED_PATHS) }), httpExtAuthz(service, fields)];
  applyListeners(mesh.serverState, protos, withCustomFilters(serverListeners('PERMISSIVE'), { httpPort: 8000, http: filters }), String(++version));
}

const viaMesh = (path: string, args: readonly string[] = []): Promise<CurlExchange> =>
  curlExchange([...args, '-x', mesh.proxyUrl, `http://httpbin.bar:8000${path}`]);
const direct = (path: string, args: readonly string[] = []): Promise<CurlExchange> => curlExchange([...args, `http://${mesh.serverPod}:8000${path}`]);
const echoed = (exchange: CurlExchange): { headers: Record<string, string>; url: string; body: string } =>
  JSON.parse(exchange.body) as { headers: Record<string, string>; url: string; body: string };
const stat = (name: string): number => mesh.serverPlane.stats.get(name);

beforeAll(async () => {
  protos = loadEnvoyProtos();
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE' });
  authorizer = await startHttpAuthorizer({ host: `127.${SUBNET}.3.1` });
  // A meshed authorizer: mutual TLS with the workload certificates of the mesh's authority.
  const tlsSecrets = mesh.secretsFor(TLS_IDENTITY);
  const certificate = tlsSecrets.certificates.get('default');
  if (!certificate) throw new Error('no workload certificate');
  tlsAuthorizer = await startHttpAuthorizer({
    host: `127.${SUBNET}.3.2`,
    tls: { key: certificate.privateKey, cert: certificate.certificateChain, ca: tlsSecrets.trustedCas.get('ROOTCA') ?? '' },
  });
  const nothing = await freePort(`127.${SUBNET}.3.9`);
  applyClusters(
    mesh.serverState,
    protos,
    [
      authorizerCluster(AUTHZ_CLUSTER, authorizer.address, authorizer.port),
      authorizerCluster(DOWN_CLUSTER, `127.${SUBNET}.3.9`, nothing),
      authorizerCluster(
        providerCluster(TLS_HOST, 8000),
        tlsAuthorizer.address,
        tlsAuthorizer.port,
        meshMutualTls(TLS_IDENTITY, `outbound_.8000_._.${TLS_HOST}`),
      ),
      authorizerCluster(
        providerCluster('impostor.foo.svc.cluster.local', 8000),
        tlsAuthorizer.address,
        tlsAuthorizer.port,
        meshMutualTls('spiffe://cluster.local/ns/foo/sa/impostor', 'impostor'),
      ),
    ],
    String(++version),
  );
  admin = newAdminServer({
    state: mesh.serverState,
    stats: mesh.serverPlane.stats,
    isReady: () => true,
    loggers: newEnvoyLoggers('warning', () => undefined),
    bootstrap: { node: { id: `sidecar~127.${SUBNET}.1.2~httpbin-1.bar~bar.svc.cluster.local` } },
    secrets: () => undefined,
    addresses: () => mesh.serverPlane.addresses(),
    drain: () => undefined,
  });
  adminPort = await admin.listen('127.0.0.1', 0);
});

afterAll(async () => {
  await Promise.all([mesh?.close(), authorizer?.close(), tlsAuthorizer?.close(), admin?.close()]);
});

beforeEach(() => {
  authorizer.reset();
  tlsAuthorizer.reset();
});

describe('ext_authz with an HTTP authorization server', () => {
  test('allowed: the check carries only the allowed headers; server headers go upstream and to the client as configured', async () => {
    useCustom({
      allowed_headers: { patterns: [{ prefix: 'x-allowed', ignore_case: true }] },
      http_service: {
        server_uri: { uri: `http://${AUTHZ_HOST}`, cluster: AUTHZ_CLUSTER, timeout: { seconds: 600 } },
        path_prefix: '/check',
        authorization_request: {
          headers_to_add: [
            { key: 'x-added', value: 'by-proxy' },
            { key: 'x-allowed-one', value: 'overwritten' },
          ],
        },
        authorization_response: {
          allowed_upstream_headers: { patterns: [{ exact: 'x-authz-user', ignore_case: true }] },
          allowed_client_headers_on_success: { patterns: [{ exact: 'x-authz-trace', ignore_case: true }] },
        },
      },
    });
    authorizer.behave({
      answer: {
        kind: 'allow',
        upstreamHeaders: { 'x-authz-user': 'alice', 'x-not-upstream': 'no' },
        clientHeaders: { 'x-authz-trace': 't-1' },
        removeHeaders: ['x-secret'],
      },
    });
    const exchange = await viaMesh('/headers?q=1', [
      '-H',
      'Authorization: Bearer token',
      '-H',
      'x-allowed-one: a',
      '-H',
      'x-allowed-two: b',
      '-H',
      'x-private: p',
      '-H',
      'x-secret: s',
    ]);
    expect(exchange.code).toBe('200');
    const app = echoed(exchange).headers;
    expect(app).toMatchObject({ 'x-authz-user': 'alice', authorization: 'Bearer token', 'x-private': 'p' });
    expect(app['x-secret']).toBeUndefined();
    expect(app['x-not-upstream']).toBeUndefined();
    expect(exchange.headers['x-authz-trace']).toEqual(['t-1']);
    expect(authorizer.calls()).toBe(1);
    const [check] = authorizer.checks();
    expect(check).toMatchObject({ method: 'GET', path: '/check/headers?q=1', body: '' });
    expect(check?.headers).toMatchObject({
      host: 'httpbin.bar:8000',
      authorization: 'Bearer token',
      'x-allowed-one': 'overwritten',
      'x-allowed-two': 'b',
      'x-added': 'by-proxy',
      'content-length': '0',
    });
    expect(check?.headers['x-private']).toBeUndefined();
    expect(check?.headers['x-secret']).toBeUndefined();
  });

  test('denied: the client gets the server status, body and the allowed headers (all but Host when none are configured)', async () => {
    const denial = {
      kind: 'deny',
      status: 401,
      headers: { 'www-authenticate': 'Bearer realm="mesh"', 'x-deny-reason': 'no token', 'x-other': 'o' },
      body: 'go away',
    } as const;
    useCustom({
      http_service: {
        server_uri: { uri: `http://${AUTHZ_HOST}`, cluster: AUTHZ_CLUSTER, timeout: { seconds: 600 } },
        authorization_response: { allowed_client_headers: { patterns: [{ exact: 'x-deny-reason' }] } },
      },
    });
    authorizer.behave({ answer: denial });
    const picked = await viaMesh('/headers');
    expect(picked).toMatchObject({ code: '401', body: 'go away' });
    expect(picked.headers['x-deny-reason']).toEqual(['no token']);
    expect(picked.headers['www-authenticate']).toEqual(['Bearer realm="mesh"']);
    expect(picked.headers['x-other']).toBeUndefined();
    useCustom();
    const all = await direct('/anything/x');
    expect(all).toMatchObject({ code: '401', body: 'go away' });
    expect(all.headers['x-other']).toEqual(['o']);
    expect(authorizer.calls()).toBe(2);
  });

  test('a request the CUSTOM rules do not match never reaches the server; the filter counts it as disabled', async () => {
    useCustom();
    authorizer.behave({ answer: { kind: 'deny', status: 403 } });
    const disabledBefore = stat(`cluster.${INBOUND_CLUSTER}.ext_authz.disabled`);
    const exchange = await viaMesh('/ip');
    expect(exchange.code).toBe('200');
    expect(authorizer.calls()).toBe(0);
    expect(stat(`cluster.${INBOUND_CLUSTER}.ext_authz.disabled`)).toBe(disabledBefore + 1);
    expect((await viaMesh('/headers')).code).toBe('403');
    expect(authorizer.calls()).toBe(1);
  });

  test('server down: failure_mode_allow lets the request through, else the status_on_error (403 by default) with an empty body', async () => {
    useCustom({}, httpService('down.foo.svc.cluster.local', 8000));
    expect(await viaMesh('/headers')).toMatchObject({ code: '403', body: '' });
    useCustom({ failure_mode_allow: true }, httpService('down.foo.svc.cluster.local', 8000));
    expect((await viaMesh('/headers')).code).toBe('200');
    // A server that hangs up without answering.
    useCustom();
    authorizer.behave({ answer: { kind: 'hang-up' } });
    expect(await viaMesh('/headers')).toMatchObject({ code: '403', body: '' });
    expect(authorizer.calls()).toBe(1);
    // A cluster the proxy does not have is an error too.
    useCustom({ status_on_error: { code: 503 } }, httpService('missing.foo.svc.cluster.local', 8000));
    expect(await viaMesh('/headers')).toMatchObject({ code: '503', body: '' });
  });

  test('timeout and 5xx answers are errors: status_on_error answers, fast', async () => {
    useCustom({ status_on_error: { code: 503 } }, httpService(AUTHZ_HOST, AUTHZ_PORT, {}, { nanos: 200_000_000 }));
    authorizer.behave({ answer: { kind: 'allow' }, delayMs: 5_000 });
    const late = await viaMesh('/headers');
    expect(late).toMatchObject({ code: '503', body: '' });
    expect(late.seconds).toBeLessThan(2);
    authorizer.behave({ answer: { kind: 'error', status: 500 } });
    expect(await viaMesh('/headers')).toMatchObject({ code: '503', body: '' });
    expect(authorizer.calls()).toBe(2);
  });

  test('the body goes to the server when asked (413 past the limit unless partial), then on to the app whole', async () => {
    useCustom({ with_request_body: { max_request_bytes: 10 } });
    const small = await viaMesh('/post', ['--data-binary', 'hello']);
    expect(small.code).toBe('200');
    expect(echoed(small).body).toBe('hello');
    expect(authorizer.checks()[0]).toMatchObject({ method: 'POST', body: 'hello' });
    expect(authorizer.checks()[0]?.headers).toMatchObject({ 'content-length': '5', 'x-envoy-auth-partial-body': 'false' });
    expect((await viaMesh('/post', ['--data-binary', 'twenty bytes of body'])).code).toBe('413');
    expect(authorizer.calls()).toBe(1);
    useCustom({ with_request_body: { max_request_bytes: 10, allow_partial_message: true } });
    const partial = await viaMesh('/post', ['--data-binary', 'twenty bytes of body', '-H', 'Transfer-Encoding: chunked']);
    expect(partial.code).toBe('200');
    expect(echoed(partial).body).toBe('twenty bytes of body');
    expect(authorizer.checks()[1]).toMatchObject({ body: 'twenty byt' });
    expect(authorizer.checks()[1]?.headers['x-envoy-auth-partial-body']).toBe('true');
  });

  test('a meshed server is called over mutual TLS with the workload certificate; a server of another identity is an error', async () => {
    useCustom({}, httpService(TLS_HOST, 8000));
    expect((await viaMesh('/headers')).code).toBe('200');
    expect(tlsAuthorizer.checks()[0]?.peerUri).toBe('spiffe://cluster.local/ns/bar/sa/httpbin');
    useCustom({}, httpService('impostor.foo.svc.cluster.local', 8000));
    expect((await viaMesh('/headers')).code).toBe('403');
    expect(tlsAuthorizer.calls()).toBe(1);
  });

  test('the stats: cluster.<route cluster>.ext_authz.{ok,denied,error,failure_mode_allowed,disabled} in /stats and /stats/prometheus', async () => {
    const scope = `cluster.${INBOUND_CLUSTER}.ext_authz.`;
    const names = ['ok', 'denied', 'error', 'failure_mode_allowed', 'disabled'];
    const before = Object.fromEntries(names.map((name) => [name, stat(`${scope}${name}`)]));
    useCustom();
    await viaMesh('/headers');
    await viaMesh('/ip');
    authorizer.behave({ answer: { kind: 'deny' } });
    await viaMesh('/headers');
    useCustom({ failure_mode_allow: true }, httpService('down.foo.svc.cluster.local', 8000));
    await viaMesh('/headers');
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/stats`)).text();
    const value = (name: string): number => Number(new RegExp(`^${(scope + name).replace(/[|.]/g, '\\$&')}: (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    expect(Object.fromEntries(names.map((name) => [name, value(name) - (before[name] ?? 0)]))).toEqual({
      ok: 1,
      denied: 1,
      error: 1,
      failure_mode_allowed: 1,
      disabled: 1,
    });
    const prometheus = await (await fetch(`http://127.0.0.1:${adminPort}/stats/prometheus`)).text();
    expect(prometheus).toMatch(/^envoy_cluster_inbound_8000___ext_authz_ok \d+$/m);
  });

  test('a filter field the data plane does not implement is refused, naming it; the last good config keeps serving', async () => {
    useCustom();
    expect(() => useCustom({ include_peer_certificate: true })).toThrow(
      /http_filters\[\d\] \(envoy\.filters\.http\.ext_authz\): include_peer_certificate: is not supported/,
    );
    expect(() => useCustom({ transport_api_version: 'V2' })).toThrow(/transport_api_version: must be V3/);
    expect((await viaMesh('/headers')).code).toBe('200');
  });
});
