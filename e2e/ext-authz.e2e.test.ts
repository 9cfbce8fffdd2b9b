import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl, echoedHeaders, type CurlResult } from '../testing/curl.js';
import { startGrpcAuthorizer, type GrpcAuthorizer } from '../testing/ext-authz/grpc-authorizer.js';
import { startHttpAuthorizer, type HttpAuthorizer } from '../testing/ext-authz/http-authorizer.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// CUSTOM AuthorizationPolicies against two real external authorizers (an HTTP one on fastify, a
// gRPC one on grpc-js with Envoy's own protos), through the local mesh with the real curl: the
// sleep client of foo calls httpbin of foo through its sidecar, whose inbound sidecar asks the
// authorizer named by the policy for the paths its rules match, and only those.
const BLOCK = 44;
const addr = (rest: string): string => `127.${BLOCK}.${rest}`;
const HTTP_AUTHZ = addr('5.10');
const GRPC_AUTHZ = addr('5.11');
const NOTHING_LISTENS = addr('5.12');
const TIMEOUT_MS = 300;
const HTTPBIN_FOO = addr('1.10');
/** A TCP service on httpbin of foo (the sample backend answers there too): the network ext_authz filter. */
const TCP_SERVICE = `apiVersion: v1
kind: Service
metadata: { name: tcpbin, namespace: foo }
spec:
  selector: { app: httpbin }
  ports: [{ name: tcp, port: 9000, targetPort: 9000, protocol: TCP }]
---
`;

let workDir: string;
let mesh: LocalMesh;
let http: HttpAuthorizer;
let grpc: GrpcAuthorizer;
const daemonLines: string[] = [];

/** The authorizers as unmeshed pods behind Services of namespace legacy (no container ports: the mesh starts no backend there). */
function authorizerServices(): string {
  const service = (name: string, ip: string, port: number): string => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: legacy }
spec:
  selector: { app: ${name} }
  ports: [{ name: ${name.includes('grpc') ? 'grpc' : 'http'}, port: ${port}, targetPort: ${port}, protocol: TCP }]
---
apiVersion: v1
kind: Pod
metadata: { name: ${name}-1, namespace: legacy, labels: { app: ${name} } }
spec: { serviceAccountName: ${name}, containers: [{ name: ${name} }] }
status: { podIP: ${ip} }
---
`;
  return service('authz-http', HTTP_AUTHZ, http.port) + service('authz-grpc', GRPC_AUTHZ, grpc.port) + service('authz-down', NOTHING_LISTENS, 9);
}

const meshConfig = (): string => `extensionProviders:
  - name: ext-http
    envoyExtAuthzHttp:
      service: legacy/authz-http.legacy.svc.cluster.local
      port: ${http.port}
      pathPrefix: /check
      includeRequestHeadersInCheck: [x-ext-authz]
      includeAdditionalHeadersInCheck: { x-mesh-checked-by: ext-http }
      headersToUpstreamOnAllow: [x-authz-result]
      headersToDownstreamOnDeny: [x-authz-reason]
  - name: ext-grpc
    envoyExtAuthzGrpc: { service: authz-grpc.legacy.svc.cluster.local, port: ${grpc.port} }
  - name: ext-slow
    envoyExtAuthzHttp: { service: authz-http.legacy.svc.cluster.local, port: ${http.port}, timeout: ${TIMEOUT_MS}ms, statusOnError: "503" }
  - name: ext-down-closed
    envoyExtAuthzHttp: { service: authz-down.legacy.svc.cluster.local, port: 9 }
  - name: ext-down-open
    envoyExtAuthzHttp: { service: authz-down.legacy.svc.cluster.local, port: 9, failOpen: true }
`;

const custom = (name: string, provider: string, paths: readonly string[]): string => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: CUSTOM
  provider: { name: ${provider} }
  rules: [{ to: [{ operation: { paths: ${JSON.stringify(paths)} } }] }]
---
`;

const POLICIES =
  custom('by-http', 'ext-http', ['/headers']) +
  custom('by-grpc', 'ext-grpc', ['/status/418']) +
  custom('by-slow', 'ext-slow', ['/status/203']) +
  custom('by-down-closed', 'ext-down-closed', ['/status/201']) +
  custom('by-down-open', 'ext-down-open', ['/status/202']) +
  custom('by-unknown', 'not-in-mesh-config', ['/status/204']) +
  `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: by-grpc-tcp, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: CUSTOM
  provider: { name: ext-grpc }
  rules: [{ to: [{ operation: { ports: ["9000"] } }] }]
`;

/** A request from sleep of foo to httpbin of foo, through the sleep sidecar. */
function get(path: string, extra: readonly string[] = []): Promise<CurlResult> {
  return curl(['-sS', '-D', '-', '-x', mesh.proxyOf('foo'), ...extra, `http://httpbin.foo:8000${path}`]);
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'ext-authz-e2e-'));
  http = await startHttpAuthorizer({ host: HTTP_AUTHZ });
  grpc = await startGrpcAuthorizer({ host: GRPC_AUTHZ });
  const samples = join(workDir, 'samples');
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), samples, { recursive: true });
  writeFileSync(join(samples, 'authorizers.yaml'), authorizerServices());
  writeFileSync(join(samples, 'custom-policies.yaml'), POLICIES);
  writeFileSync(join(samples, 'tcpbin.yaml'), TCP_SERVICE);
  const foo = join(samples, 'workloads-foo.yaml');
  writeFileSync(foo, readFileSync(foo, 'utf8').replace('- containerPort: 8080', '- containerPort: 8080\n        - containerPort: 9000'));
  mesh = await startLocalMesh({
    workDir: join(workDir, 'mesh'),
    samples,
    addressBlock: BLOCK,
    meshConfig: meshConfig(),
    log: (line) => void (line.startsWith('[meshd]') && daemonLines.push(line)),
  });
  await mesh.waitReady(30_000);
  // The first allowed request proves the sidecars have the CUSTOM filters and the authorizer's cluster.
  await waitFor(async () => (await get('/headers')).code === '200' && http.calls() > 0, { description: 'the HTTP authorizer consulted', timeoutMs: 30_000 });
  http.reset();
}, 90_000);

afterAll(async () => {
  await mesh?.stop();
  await Promise.all([http?.close(), grpc?.close()]);
  rmSync(workDir, { recursive: true, force: true });
});

describe('CUSTOM with an HTTP authorizer', () => {
  test("allowed: the request goes on with the authorizer's upstream header; the check carries the allowed headers only", async () => {
    http.behave({ answer: { kind: 'allow', upstreamHeaders: { 'x-authz-result': 'granted', 'x-not-allowed': 'dropped' } } });
    const result = await get('/headers', ['-H', 'x-ext-authz: please', '-H', 'x-other: secret']);
    expect(result.code).toBe('200');
    const seen = echoedHeaders(result.body.slice(result.body.indexOf('\r\n\r\n') + 4));
    expect(seen['X-Authz-Result']).toBe('granted');
    expect(seen['X-Not-Allowed']).toBeUndefined();
    expect(http.calls()).toBe(1);
    const check = http.checks()[0];
    expect(check?.method).toBe('GET');
    expect(check?.path).toBe('/check/headers');
    expect(check?.headers['x-ext-authz']).toBe('please');
    expect(check?.headers['x-mesh-checked-by']).toBe('ext-http');
    expect(check?.headers['x-other']).toBeUndefined();
  });

  test("denied: the client gets the authorizer's status, body and allowed headers; the app is not reached", async () => {
    http.behave({ answer: { kind: 'deny', status: 401, headers: { 'x-authz-reason': 'no ticket', 'x-internal': 'hidden' }, body: 'go away' } });
    const result = await get('/headers');
    expect(result.code).toBe('401');
    expect(result.body).toContain('go away');
    expect(result.body.toLowerCase()).toContain('x-authz-reason: no ticket');
    expect(result.body.toLowerCase()).not.toContain('x-internal');
  });

  test('a request the CUSTOM rules do not match never reaches the authorizer', async () => {
    http.reset();
    http.behave({ answer: { kind: 'deny', status: 403 } });
    expect((await get('/ip')).code).toBe('200');
    expect((await get('/status/299')).code).toBe('299');
    expect(http.calls()).toBe(0);
  });

  test('an authorizer slower than the provider timeout is an error: statusOnError answers', async () => {
    http.reset();
    http.behave({ answer: { kind: 'allow' }, delayMs: TIMEOUT_MS * 10 });
    expect((await get('/status/203')).code).toBe('503');
  });
});

describe('CUSTOM with the authorizer down', () => {
  test('failOpen false: 403, the default statusOnError', async () => {
    expect((await get('/status/201')).code).toBe('403');
  });

  test('failOpen true: the request goes on', async () => {
    expect((await get('/status/202')).code).toBe('202');
  });

  test('a provider the mesh config does not define denies exactly its rules, and the daemon says why', async () => {
    expect((await get('/status/204')).code).toBe('403');
    expect((await get('/status/205')).code).toBe('205');
    const logged = daemonLines.filter((line) => line.includes('failed to process CUSTOM action of foo/by-unknown'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('available providers are [');
  });
});

describe('CUSTOM with a gRPC authorizer', () => {
  test("allowed and denied through envoy.service.auth.v3.Authorization/Check, with the caller's identity", async () => {
    grpc.behave({ answer: { kind: 'allow' } });
    expect((await get('/status/418')).code).toBe('418');
    const check = grpc.checks().at(-1);
    expect(check?.attributes.source.principal).toBe('spiffe://cluster.local/ns/foo/sa/sleep');
    grpc.behave({ answer: { kind: 'deny', status: 429, body: 'slow down' } });
    const denied = await get('/status/418');
    expect(denied.code).toBe('429');
    expect(denied.body).toContain('slow down');
  });
});

describe('CUSTOM on a TCP port: the network filter asks the gRPC authorizer once per connection', () => {
  test('allowed: the connection carries the bytes; denied: it is closed; the check has no HTTP attributes', async () => {
    grpc.reset();
    grpc.behave({ answer: { kind: 'allow' } });
    const allowed = await curl(['--http1.1', `http://${HTTPBIN_FOO}:9000/ip`]);
    expect(allowed.code).toBe('200');
    expect(grpc.calls()).toBe(1);
    const check = grpc.checks()[0] as { attributes: { request?: { http?: object } | null } };
    expect(check.attributes.request?.http ?? null).toBeNull();
    grpc.behave({ answer: { kind: 'deny' } });
    const denied = await curl(['--http1.1', `http://${HTTPBIN_FOO}:9000/ip`]);
    expect(denied.code).toBe('000');
    // The HTTP port of the same workload is not checked by the TCP rule.
    expect((await get('/ip')).code).toBe('200');
    expect(grpc.calls()).toBe(2);
  });
});

describe('a bad mesh config', () => {
  test('two providers of one name are refused; the last good config keeps serving', async () => {
    mesh.setMeshConfig(`${meshConfig()}  - name: ext-http\n    envoyExtAuthzGrpc: { service: authz-grpc.legacy.svc.cluster.local, port: ${grpc.port} }\n`);
    const rejected = async (): Promise<boolean> => {
      const metrics = await (await fetch(`http://127.0.0.1:${mesh.daemon.monitoringPort}/metrics`)).text();
      return /pilot_total_rejected_configs\{[^}]*type="MeshConfig"[^}]*\} [1-9]/.test(metrics);
    };
    await waitFor(rejected, { description: 'the mesh config rejected', timeoutMs: 20_000 });
    http.reset();
    http.behave({ answer: { kind: 'deny', status: 451 } });
    expect((await get('/headers')).code).toBe('451');
    expect(http.calls()).toBe(1);
  });
});
