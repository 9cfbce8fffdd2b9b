import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { loadEnvoyProtos, type EnvoyProtos } from '../xds/envoy/envoy-protos.js';
import type { ConfigSnapshot } from './config-state.js';
import type { ConnectionFacts, HttpDecision, PeerCertificate } from './decisions/index.js';
import { simulateYaml } from './testing/simulation-support.js';

// Seed 1's authorization and JWT behaviour, decided by the data plane's functions over the
// config the daemon generates from YAML (no sockets).
const ISSUER = 'testing@secure.mesh.io';
const NOW = new Date('2026-11-22T12:00:00Z');
const nowSeconds = NOW.getTime() / 1000;

let protos: EnvoyProtos;
let dir: string;
let privateKey: CryptoKey;
let jwks: string;

const WORKLOADS = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec: { clusterIP: 10.96.0.10, selector: { app: httpbin }, ports: [{ name: http, port: 8000, targetPort: 80 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: httpbin-1, namespace: foo, labels: { app: httpbin }, annotations: { sidecar.mesh.io/status: injected } }
spec: { serviceAccountName: httpbin, containers: [{ name: httpbin, ports: [{ containerPort: 80 }] }] }
status: { podIP: 10.0.1.10 }
---
apiVersion: v1
kind: Pod
metadata: { name: sleep-1, namespace: bar, labels: { app: sleep }, annotations: { sidecar.mesh.io/status: injected } }
spec: { serviceAccountName: sleep, containers: [{ name: sleep }] }
status: { podIP: 10.0.2.20 }
`;

const SERVER_NODE = `
---
kind: ProxyNode
id: sidecar~10.0.1.10~httpbin-1.foo~foo.svc.cluster.local
metadata: { NAMESPACE: foo, SERVICE_ACCOUNT: httpbin }
`;
const CLIENT_NODE = `
---
kind: ProxyNode
id: sidecar~10.0.2.20~sleep-1.bar~bar.svc.cluster.local
metadata: { NAMESPACE: bar, SERVICE_ACCOUNT: sleep }
`;

function requestAuthentication(): string {
  return `
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt-example, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules:
    - issuer: ${ISSUER}
      jwks: '${jwks}'
`;
}

const simulate = (name: string, yaml: string): ConfigSnapshot => simulateYaml(protos, dir, name, yaml);

const meshedPeer: PeerCertificate = { uriSans: ['spiffe://cluster.local/ns/bar/sa/sleep'], dnsSans: [], subject: '', sha256: 'ab' };
const inboundTls: ConnectionFacts = {
  destinationAddress: '10.0.1.10',
  destinationPort: 80,
  sourceAddress: '10.0.2.20',
  transportProtocol: 'tls',
  peerCertificate: meshedPeer,
};

async function request(snapshot: ConfigSnapshot, path: string, headers: Record<string, string> = {}, now = NOW): Promise<HttpDecision> {
  const chain = snapshot.decisions.connection('virtualInbound', inboundTls);
  if (chain.kind !== 'accept') throw new Error('no chain');
  return chain.http(
    { method: 'GET', host: 'httpbin.foo:8000', path, headers },
    { connection: inboundTls, localUriSan: 'spiffe://cluster.local/ns/foo/sa/httpbin', now, random: 0, pick: 0 },
  );
}

const status = (decision: HttpDecision): number => (decision.kind === 'respond' ? decision.status : 200);
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const token = (claims: Record<string, number>): Promise<string> =>
  new SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).sign(privateKey);

beforeAll(async () => {
  protos = loadEnvoyProtos();
  dir = mkdtempSync(join(tmpdir(), 'simulation-'));
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('JWT at a workload (seed 1 table)', () => {
  let snapshot: ConfigSnapshot;
  beforeAll(() => {
    snapshot = simulate('jwt', WORKLOADS + requestAuthentication() + SERVER_NODE);
  });

  test('no token 200, invalid token 401, valid token 200', async () => {
    expect(status(await request(snapshot, '/headers'))).toBe(200);
    expect(status(await request(snapshot, '/headers', bearer('not-a-token')))).toBe(401);
    expect(status(await request(snapshot, '/headers', bearer(await token({ exp: nowSeconds + 600 }))))).toBe(200);
  });

  test('60 s of clock skew around exp and nbf', async () => {
    const expiring = await token({ exp: nowSeconds });
    expect(status(await request(snapshot, '/ip', bearer(expiring), new Date(NOW.getTime() + 59_000)))).toBe(200);
    expect(status(await request(snapshot, '/ip', bearer(expiring), new Date(NOW.getTime() + 61_000)))).toBe(401);
    const early = await token({ nbf: nowSeconds, exp: nowSeconds + 3600 });
    expect(status(await request(snapshot, '/ip', bearer(early), new Date(NOW.getTime() - 59_000)))).toBe(200);
    expect(status(await request(snapshot, '/ip', bearer(early), new Date(NOW.getTime() - 61_000)))).toBe(401);
  });
});

describe('AuthorizationPolicy over generated config', () => {
  const denyWithoutToken = (paths?: string): string => `
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: require-jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules:
    - from: [{ source: { notRequestPrincipals: ["*"] } }]${paths ? `\n      to: [{ operation: { paths: ["${paths}"] } }]` : ''}
`;

  test('DENY notRequestPrincipals ["*"]: 403 without a token, 200 with one', async () => {
    const snapshot = simulate('deny', WORKLOADS + requestAuthentication() + denyWithoutToken() + SERVER_NODE);
    expect(await request(snapshot, '/headers')).toMatchObject({ kind: 'respond', status: 403, by: 'rbac' });
    expect(status(await request(snapshot, '/headers', bearer(await token({ exp: nowSeconds + 600 }))))).toBe(200);
  });

  test('a DENY on one scope matches it inside a space-delimited scope claim, as Envoy normalizes it; a look-alike does not', async () => {
    const denyAdmin = `
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-admin-scope, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ when: [{ key: "request.auth.claims[scope]", values: ["admin"] }] }]
`;
    const snapshot = simulate('deny-scope', WORKLOADS + requestAuthentication() + denyAdmin + SERVER_NODE);
    const scoped = (scope: string): Promise<string> =>
      new SignJWT({ sub: 'alice', scope, exp: nowSeconds + 600 }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).sign(privateKey);
    expect(await request(snapshot, '/ip', bearer(await scoped('read admin')))).toMatchObject({ kind: 'respond', status: 403, by: 'rbac' });
    expect(status(await request(snapshot, '/ip', bearer(await scoped('admin'))))).toBe(403);
    expect(status(await request(snapshot, '/ip', bearer(await scoped('  admin  read'))))).toBe(403);
    expect(status(await request(snapshot, '/ip', bearer(await scoped('read administrator'))))).toBe(200);
    expect(status(await request(snapshot, '/ip', bearer(await scoped('read'))))).toBe(200);
  });

  test('with to.operation.paths ["/headers"]: /headers 403 and /ip 200 without a token', async () => {
    const snapshot = simulate('deny-path', WORKLOADS + requestAuthentication() + denyWithoutToken('/headers') + SERVER_NODE);
    expect(status(await request(snapshot, '/headers'))).toBe(403);
    expect(status(await request(snapshot, '/ip'))).toBe(200);
    // Paths are normalized before they are matched.
    expect(status(await request(snapshot, '/ip/../headers'))).toBe(403);
  });

  test('ALLOW with no rules denies everything; rules: [{}] allows everything', async () => {
    const allowNothing = `\n---\napiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: allow-nothing, namespace: foo }\nspec: { action: ALLOW }\n`;
    expect(status(await request(simulate('allow-nothing', WORKLOADS + allowNothing + SERVER_NODE), '/ip'))).toBe(403);
    const allowAll = `\n---\napiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: allow-all, namespace: foo }\nspec: { action: ALLOW, rules: [{}] }\n`;
    expect(status(await request(simulate('allow-all', WORKLOADS + allowNothing + allowAll + SERVER_NODE), '/ip'))).toBe(200);
  });
});

describe('client side over generated config', () => {
  test('auto mutual TLS to a meshed endpoint: SNI and an exact SAN check; a DISABLE workload gets plain text', async () => {
    const client = simulate('client', WORKLOADS + CLIENT_NODE);
    const listener = client.decisions.listenerFor('outbound', '10.96.0.10', 8000) ?? '';
    const chain = client.decisions.connection(listener, {
      destinationAddress: '10.96.0.10',
      destinationPort: 8000,
      sourceAddress: '10.0.2.20',
      transportProtocol: 'raw_buffer',
    });
    if (chain.kind !== 'accept') throw new Error('no outbound chain');
    const context = {
      connection: { destinationAddress: '10.96.0.10', destinationPort: 8000, sourceAddress: '10.0.2.20', transportProtocol: 'raw_buffer' as const },
      now: NOW,
      random: 0,
      pick: 0,
    };
    const decision = await chain.http({ method: 'GET', host: 'httpbin.foo:8000', path: '/ip', headers: { 'x-forwarded-client-cert': 'By=forged' } }, context);
    expect(decision).toMatchObject({
      kind: 'forward',
      route: { cluster: 'outbound|8000||httpbin.foo.svc.cluster.local' },
      upstream: { kind: 'endpoint', address: '10.0.1.10', port: 80 },
    });
    if (decision.kind !== 'forward' || decision.upstream.kind !== 'endpoint') return;
    expect(decision.headersToRemove).toContain('x-forwarded-client-cert');
    const tls = decision.upstream.tls;
    expect(tls).toMatchObject({
      kind: 'tls',
      sni: 'outbound_.8000_._.httpbin.foo.svc.cluster.local',
      certificateSecrets: ['default'],
      validationSecret: 'ROOTCA',
    });
    expect(tls.kind === 'tls' && tls.verifySubjectAltName?.('spiffe://cluster.local/ns/foo/sa/httpbin')).toBe(true);
    expect(tls.kind === 'tls' && tls.verifySubjectAltName?.('spiffe://cluster.local/ns/foo/sa/other')).toBe(false);

    const disabled = simulate(
      'client-disable',
      WORKLOADS +
        `\n---\napiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: httpbin, namespace: foo }\nspec: { selector: { matchLabels: { app: httpbin } }, mtls: { mode: DISABLE } }\n` +
        CLIENT_NODE,
    );
    const plainChain = disabled.decisions.connection(listener, context.connection);
    if (plainChain.kind !== 'accept') throw new Error('no outbound chain');
    const plain = await plainChain.http({ method: 'GET', host: 'httpbin.foo:8000', path: '/ip', headers: {} }, context);
    expect(plain).toMatchObject({ kind: 'forward', upstream: { kind: 'endpoint', tls: { kind: 'plaintext' } } });
  });
});
