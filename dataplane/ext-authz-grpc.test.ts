import { connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { startGrpcAuthorizer, type GrpcAuthorizer } from '../testing/ext-authz/grpc-authorizer.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../xds/envoy/index.js';
import { curlExchange, type CurlExchange } from './testing/curl-exchange.js';
import {
  applyClusters,
  applyListeners,
  authorizerCluster,
  customPolicyName,
  customShadowRbac,
  grpcService,
  httpExtAuthz,
  networkExtAuthz,
  pathsPermission,
  providerCluster,
  withCustomFilters,
} from './testing/ext-authz-config.js';
import { ECHO_SERVICE, ECHO_TCP_PORT, serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// The server sidecar of the two-sidecar fixture (PERMISSIVE) with CUSTOM pairs calling a real gRPC
// authorization server (grpc-js, its service loaded from Envoy's own protos): the HTTP filter on
// port 8000, driven by the real curl, and the network filter on a TCP port with an echo behind it.
const SUBNET = 112;
const SERVER_POD = `127.${SUBNET}.1.2`;
const SERVER_APP = `127.${SUBNET}.2.2`;
const CLIENT_POD = `127.${SUBNET}.1.1`;
const TCP_PORT = ECHO_TCP_PORT;
const AUTHZ_HOST = 'ext-authz-grpc.foo.svc.cluster.local';
const AUTHZ_PORT = 9000;
const SLEEP = 'spiffe://cluster.local/ns/foo/sa/sleep';
const HTTPBIN = 'spiffe://cluster.local/ns/bar/sa/httpbin';
const POLICY = customPolicyName('bar', 'ext', 0);

let protos: EnvoyProtos;
let mesh: TwoSidecars;
let echo: Server;
let authorizer: GrpcAuthorizer;
let version = 0;

interface Custom {
  readonly http?: Record<string, unknown>;
  /** The network filter's fields, and the port its CUSTOM rule matches (a rule on another port leaves the filter disabled). */
  readonly tcp?: { readonly fields?: Record<string, unknown>; readonly rulePort?: number };
}

function useCustom(custom: Custom): void {
  const service = grpcService(AUTHZ_HOST, AUTHZ_PORT);
  const http = custom.http ? [customShadowRbac('http', { [POLICY]: pathsPermission(['/headers', '/post']) }), httpExtAuthz(service, custom.http)] : undefined;
  const tcp = custom.tcp
    ? {
        port: TCP_PORT,
        filters: [
          customShadowRbac('network', { [POLICY]: { destination_port: custom.tcp.rulePort ?? TCP_PORT } }),
          networkExtAuthz(service, custom.tcp.fields),
        ],
      }
    : undefined;
  const listeners = withCustomFilters(serverListeners('PERMISSIVE', [ECHO_SERVICE]), { httpPort: 8000, ...(http ? { http } : {}), ...(tcp ? { tcp } : {}) });
  applyListeners(mesh.serverState, protos, listeners, String(++version));
}

const viaMesh = (path: string, args: readonly string[] = []): Promise<CurlExchange> =>
  curlExchange([...args, '-x', mesh.proxyUrl, `http://httpbin.bar:8000${path}`]);
const stat = (name: string): number => mesh.serverPlane.stats.get(name);

/** A TCP connection to the server pod's echo port: what came back before the connection closed. */
function tcpExchange(payload: string): Promise<{ echoed: string; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    let echoed = '';
    let closedByServer = true;
    const socket = connect({ host: SERVER_POD, port: TCP_PORT, localAddress: CLIENT_POD });
    socket.on('data', (chunk: Buffer) => {
      echoed += chunk.toString('utf8');
      if (echoed === payload) {
        closedByServer = false;
        socket.end();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ echoed, closedByServer }));
    socket.write(payload);
  });
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(TCP_PORT, SERVER_APP, resolve));
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: [ECHO_SERVICE], serverPorts: [8000, TCP_PORT] });
  authorizer = await startGrpcAuthorizer({ host: `127.${SUBNET}.3.1` });
  applyClusters(mesh.serverState, protos, [authorizerCluster(providerCluster(AUTHZ_HOST, AUTHZ_PORT), authorizer.address, authorizer.port)], String(++version));
});

afterAll(async () => {
  await Promise.all([mesh?.close(), authorizer?.close()]);
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

beforeEach(() => authorizer.reset());

describe('the HTTP ext_authz filter with a gRPC authorization server', () => {
  test('allowed: the CheckRequest carries the peers, principals and every header; the OK response edits the request and the response', async () => {
    useCustom({ http: {} });
    authorizer.behave({
      answer: {
        kind: 'allow',
        upstreamHeaders: { 'x-authz-user': 'alice', 'x-role': 'reader' },
        removeHeaders: ['x-secret'],
        clientHeaders: { 'x-authz-trace': 't-1' },
      },
    });
    const exchange = await viaMesh('/headers?x=1', ['-H', 'x-role: admin', '-H', 'x-secret: s']);
    expect(exchange.code).toBe('200');
    const app = (JSON.parse(exchange.body) as { headers: Record<string, string> }).headers;
    expect(app).toMatchObject({ 'x-authz-user': 'alice', 'x-role': 'reader' });
    expect(app['x-secret']).toBeUndefined();
    expect(exchange.headers['x-authz-trace']).toEqual(['t-1']);
    expect(authorizer.calls()).toBe(1);
    expect(authorizer.authorities()).toEqual([AUTHZ_HOST]);
    const { attributes } = authorizer.checks()[0] ?? { attributes: undefined };
    // The source is the client sidecar's connection, from whatever loopback address the system gave it.
    expect(attributes?.source.principal).toBe(SLEEP);
    expect(attributes?.source.address?.socket_address.address).toMatch(/^127\./);
    expect(attributes?.source.address?.socket_address.port_value).toBeGreaterThan(0);
    expect(attributes?.destination).toMatchObject({ address: { socket_address: { address: SERVER_POD, port_value: 8000 } }, principal: HTTPBIN });
    expect(attributes?.request?.http).toMatchObject({
      method: 'GET',
      path: '/headers?x=1',
      host: 'httpbin.bar:8000',
      scheme: 'https',
      protocol: 'HTTP/1.1',
      size: '-1',
      query: '',
      body: '',
    });
    expect(attributes?.request?.http?.headers).toMatchObject({
      ':authority': 'httpbin.bar:8000',
      ':method': 'GET',
      ':path': '/headers?x=1',
      'x-role': 'admin',
      'x-secret': 's',
    });
    expect(Number(attributes?.request?.time?.seconds)).toBeGreaterThan(0);
  });

  test('denied: the denied response status, headers and body; 403 when it names no status', async () => {
    useCustom({ http: {} });
    authorizer.behave({ answer: { kind: 'deny', status: 401, headers: { 'x-deny-reason': 'no token' }, body: 'go away' } });
    const denied = await viaMesh('/headers');
    expect(denied).toMatchObject({ code: '401', body: 'go away' });
    expect(denied.headers['x-deny-reason']).toEqual(['no token']);
    authorizer.behave({ answer: { kind: 'deny' } });
    expect((await viaMesh('/headers')).code).toBe('403');
  });

  test('a failed call is an error: status_on_error, or through with failure_mode_allow; a plain-text request has no principals', async () => {
    useCustom({ http: { status_on_error: { code: 503 } } });
    authorizer.behave({ answer: { kind: 'error' } });
    expect(await viaMesh('/headers')).toMatchObject({ code: '503', body: '' });
    useCustom({ http: { failure_mode_allow: true } });
    const plain = await curlExchange([`http://${SERVER_POD}:8000/headers`]);
    expect(plain.code).toBe('200');
    const source = authorizer.checks()[1]?.attributes;
    expect(source?.source.principal).toBe('');
    expect(source?.destination.principal).toBe('');
    expect(source?.request?.http?.scheme).toBe('http');
  });

  test('a server that goes away mid-call is an error', async () => {
    const doomed = await startGrpcAuthorizer({ host: `127.${SUBNET}.3.2` });
    try {
      applyClusters(
        mesh.serverState,
        protos,
        [authorizerCluster(providerCluster('doomed.foo.svc.cluster.local', 9000), doomed.address, doomed.port)],
        String(++version),
      );
      const listeners = withCustomFilters(serverListeners('PERMISSIVE', [ECHO_SERVICE]), {
        httpPort: 8000,
        http: [
          customShadowRbac('http', { [POLICY]: pathsPermission(['/headers']) }),
          httpExtAuthz(grpcService('doomed.foo.svc.cluster.local', 9000), { status_on_error: { code: 502 } }),
        ],
      });
      applyListeners(mesh.serverState, protos, listeners, String(++version));
      doomed.behave({ answer: { kind: 'hang-up' } });
      expect(await viaMesh('/headers')).toMatchObject({ code: '502', body: '' });
      expect(doomed.calls()).toBe(1);
      // Gone for good: the next check finds nothing listening.
      expect((await viaMesh('/headers')).code).toBe('502');
    } finally {
      await doomed.close();
    }
  });

  test('the body in the check: as text, or as bytes with pack_as_bytes', async () => {
    useCustom({ http: { with_request_body: { max_request_bytes: 64 } } });
    expect((await viaMesh('/post', ['--data-binary', 'hello'])).code).toBe('200');
    expect(authorizer.checks()[0]?.attributes.request?.http).toMatchObject({ method: 'POST', body: 'hello', size: '5' });
    expect(authorizer.checks()[0]?.attributes.request?.http?.headers['x-envoy-auth-partial-body']).toBe('false');
    useCustom({ http: { with_request_body: { max_request_bytes: 64, pack_as_bytes: true } } });
    expect((await viaMesh('/post', ['--data-binary', 'bytes'])).code).toBe('200');
    expect(authorizer.checks()[1]?.attributes.request?.http?.body).toBe('');
    expect(Buffer.from(authorizer.checks()[1]?.attributes.request?.http?.raw_body ?? []).toString()).toBe('bytes');
  });
});

describe('the network ext_authz filter on a TCP chain', () => {
  const scope = 'ext_authz.tcp..';
  const counters = (): Record<string, number> =>
    Object.fromEntries(['total', 'ok', 'denied', 'error', 'failure_mode_allowed', 'disabled', 'cx_closed'].map((name) => [name, stat(`${scope}${name}`)]));
  const delta = (before: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(counters()).map(([name, value]) => [name, value - (before[name] ?? 0)]));

  test('an allowed connection passes its bytes; the check carries the connection only', async () => {
    useCustom({ tcp: {} });
    const before = counters();
    expect(await tcpExchange('ping')).toEqual({ echoed: 'ping', closedByServer: false });
    expect(authorizer.calls()).toBe(1);
    const { attributes } = authorizer.checks()[0] ?? { attributes: undefined };
    expect(attributes?.source).toMatchObject({ address: { socket_address: { address: CLIENT_POD } }, principal: '' });
    expect(attributes?.destination).toMatchObject({ address: { socket_address: { address: SERVER_POD, port_value: TCP_PORT } }, principal: '' });
    expect(attributes?.request).toBeNull();
    expect(delta(before)).toMatchObject({ total: 1, ok: 1, denied: 0, cx_closed: 0 });
    expect(stat(`${scope}active`)).toBe(0);
  });

  test('a denied connection is closed before any byte reaches the app', async () => {
    useCustom({ tcp: {} });
    authorizer.behave({ answer: { kind: 'deny' } });
    const before = counters();
    expect(await tcpExchange('ping')).toEqual({ echoed: '', closedByServer: true });
    expect(delta(before)).toMatchObject({ total: 1, denied: 1, cx_closed: 1 });
  });

  test('errors close the connection unless failure_mode_allow; a connection the CUSTOM rules do not match is not checked', async () => {
    authorizer.behave({ answer: { kind: 'error' } });
    useCustom({ tcp: {} });
    const before = counters();
    expect((await tcpExchange('ping')).closedByServer).toBe(true);
    useCustom({ tcp: { fields: { failure_mode_allow: true } } });
    expect(await tcpExchange('ping')).toEqual({ echoed: 'ping', closedByServer: false });
    useCustom({ tcp: { rulePort: 9999 } });
    expect(await tcpExchange('ping')).toEqual({ echoed: 'ping', closedByServer: false });
    expect(authorizer.calls()).toBe(2);
    expect(delta(before)).toEqual({ total: 2, ok: 0, denied: 0, error: 2, failure_mode_allowed: 1, disabled: 1, cx_closed: 1 });
  });
});
