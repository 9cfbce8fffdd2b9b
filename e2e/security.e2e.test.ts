import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { curl, echoedHeaders } from '../testing/curl.js';
import { certificateAuthority, selfSignedCertificate, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { rawGet } from '../testing/raw-http.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// The security review's attacks, against the local mesh with the real curl, openssl and raw
// sockets: forged and foreign certificates on every mutual TLS path, several JWT keys and tokens,
// repeated headers, escaped NULs and odd paths on both the mutual TLS and the plain-text leg.
// Namespace bar is STRICT; foo is PERMISSIVE (the plain-text leg of the path tables).
const BLOCK = 30;
const addr = (rest: string): string => `127.${BLOCK}.${rest}`;
const HTTPBIN_BAR = addr('2.10');
const HTTPBIN_FOO = addr('1.10');
const IMPOSTOR_FOO = addr('1.30');
const WILDCARD_FOO = addr('1.31');
const GATEWAY = addr('9.10');
const SLEEP_ID = 'URI:spiffe://cluster.local/ns/foo/sa/sleep';

/** The samples plus: a TCP port on httpbin of bar, an unmeshed impostor behind a MESH_MUTUAL DestinationRule, an mTLS gateway server. */
const EXTRA_CONFIG = `apiVersion: v1
kind: Service
metadata: { name: tcpbin, namespace: bar }
spec:
  selector: { app: httpbin }
  ports: [{ name: tcp, port: 9000, targetPort: 9000, protocol: TCP }]
---
apiVersion: v1
kind: Pod
metadata: { name: impostor-foo, namespace: foo, labels: { app: impostor } }
spec: { serviceAccountName: httpbin, containers: [{ name: impostor }] }
status: { podIP: 127.0.1.30 }
---
apiVersion: v1
kind: Service
metadata: { name: impostor, namespace: foo }
spec:
  selector: { app: impostor }
  ports: [{ name: http, port: 8000, targetPort: 9443, protocol: TCP }]
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: impostor, namespace: foo }
spec:
  host: impostor.foo.svc.cluster.local
  trafficPolicy: { tls: { mode: MESH_MUTUAL } }
---
apiVersion: v1
kind: Pod
metadata: { name: wildcard-foo, namespace: foo, labels: { app: wildcard } }
spec: { serviceAccountName: wildcard, containers: [{ name: wildcard }] }
status: { podIP: 127.0.1.31 }
---
apiVersion: v1
kind: Service
metadata: { name: wildcard, namespace: foo }
spec:
  selector: { app: wildcard }
  ports: [{ name: http, port: 8000, targetPort: 9443, protocol: TCP }]
---
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: { name: mtls-gateway, namespace: foo }
spec:
  selector: { mesh: ingressgateway }
  servers:
    - port: { number: 8443, name: https, protocol: HTTPS }
      hosts: ["*"]
      tls: { mode: MESH_MUTUAL }
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: { name: httpbin-mtls, namespace: foo }
spec:
  hosts: ["*"]
  gateways: [mtls-gateway]
  http:
    - route: [{ destination: { host: httpbin.foo.svc.cluster.local, port: { number: 8000 } } }]
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: default, namespace: bar }
spec: { mtls: { mode: STRICT } }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: no-admin, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ when: [{ key: "request.headers[x-user]", values: ["admin"] }] }]
`;

let workDir: string;
let mesh: LocalMesh;
let forged: KeyAndCert;
let genuine: KeyAndCert;
let forgedServer: KeyAndCert;
let genuineServer: KeyAndCert;
let impostor: HttpsServer | undefined;

/** Serves `/headers` over TLS on the impostor's pod address with the given certificate. */
async function startImpostor(identity: KeyAndCert): Promise<void> {
  await stopImpostor();
  const server = createHttpsServer(
    { key: readFileSync(identity.keyFile), cert: readFileSync(identity.certFile), requestCert: true, rejectUnauthorized: false },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ headers: { impostor: 'yes' } }));
    },
  );
  await new Promise<void>((resolve) => server.listen(9443, IMPOSTOR_FOO, resolve));
  impostor = server;
}

async function stopImpostor(): Promise<void> {
  const server = impostor;
  impostor = undefined;
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const withCert = (cert: KeyAndCert): string[] => ['-k', '--cert', cert.certFile, '--key', cert.keyFile];
const sidecarOf = (namespace: string): { host: string; port: number } => {
  const url = new URL(mesh.proxyOf(namespace));
  return { host: url.hostname, port: Number(url.port) };
};

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'security-e2e-'));
  const samples = join(workDir, 'samples');
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), samples, { recursive: true });
  const bar = join(samples, 'workloads-bar.yaml');
  writeFileSync(bar, readFileSync(bar, 'utf8').replace('- containerPort: 8080', '- containerPort: 8080\n        - containerPort: 9000'));
  writeFileSync(join(samples, 'security-extra.yaml'), EXTRA_CONFIG);
  mesh = await startLocalMesh({ workDir: join(workDir, 'mesh'), samples, addressBlock: BLOCK });
  await mesh.waitReady(30_000);
  const certs = join(workDir, 'certs');
  cpSync(join(workDir, 'mesh/daemon/var/lib/mesh/ca'), certs, { recursive: true });
  const meshRoot = { keyFile: join(certs, 'ca-key.pem'), certFile: join(certs, 'ca-cert.pem') };
  forged = await selfSignedCertificate(certs, 'forged', SLEEP_ID);
  genuine = await signedCertificate(certs, 'genuine', SLEEP_ID, meshRoot);
  forgedServer = await selfSignedCertificate(certs, 'forged-httpbin', 'URI:spiffe://cluster.local/ns/foo/sa/httpbin');
  genuineServer = await signedCertificate(certs, 'genuine-httpbin', 'URI:spiffe://cluster.local/ns/foo/sa/httpbin', meshRoot);
}, 60_000);

afterAll(async () => {
  await stopImpostor();
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('0. mutual TLS verifies the peer chain: sidecar inbound under STRICT', () => {
  test('HTTP port: a self-signed certificate claiming a mesh identity is refused, no request reaches the app', async () => {
    const result = await curl([...withCert(forged), '--http1.1', `https://${HTTPBIN_BAR}:8080/headers`]);
    expect(result.code).toBe('000');
    expect(result.exit).not.toBe(0);
  });

  test('HTTP port: a certificate of the mesh CA is served, with its identity in XFCC', async () => {
    const result = await curl([...withCert(genuine), '--http1.1', `https://${HTTPBIN_BAR}:8080/headers`]);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
  });

  test('HTTP/2 negotiated by ALPN over mutual TLS is answered', async () => {
    const result = await curl([...withCert(genuine), '--http2', `https://${HTTPBIN_BAR}:8080/headers`]);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
    expect((await curl([...withCert(forged), '--http2', `https://${HTTPBIN_BAR}:8080/headers`])).code).toBe('000');
  });

  test('TCP port: a self-signed certificate is refused, a mesh one is proxied', async () => {
    expect((await curl([...withCert(forged), '--http1.1', `https://${HTTPBIN_BAR}:9000/ip`])).code).toBe('000');
    expect((await curl([...withCert(genuine), '--http1.1', `https://${HTTPBIN_BAR}:9000/ip`])).code).toBe('200');
  });
});

describe('0. mutual TLS verifies the peer chain: the client side and the gateway', () => {
  test('an upstream presenting a self-signed certificate with the expected SAN is refused', async () => {
    await startImpostor(forgedServer);
    expect((await curl(['-x', mesh.proxyOf('foo'), 'http://impostor.foo:8000/headers'])).code).toBe('503');
  });

  test('the same upstream with a certificate of the mesh CA is reached', async () => {
    await startImpostor(genuineServer);
    const result = await curl(['-x', mesh.proxyOf('foo'), 'http://impostor.foo:8000/headers']);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['impostor']).toBe('yes');
  });

  test('ingress gateway MESH_MUTUAL server: self-signed refused, none refused, a mesh certificate routed', async () => {
    expect((await curl([...withCert(forged), `https://${GATEWAY}:8443/headers`])).code).toBe('000');
    expect((await curl(['-k', `https://${GATEWAY}:8443/headers`])).code).toBe('000');
    expect((await curl([...withCert(genuine), `https://${GATEWAY}:8443/headers`])).code).toBe('200');
  });
});

describe('6. upstream SAN matching with a wildcard certificate (DestinationRule SIMPLE)', () => {
  let server: HttpsServer;
  let caFile: string;
  const destinationRule = (san: string): string =>
    `apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: wildcard, namespace: foo }\nspec:\n  host: wildcard.foo.svc.cluster.local\n  trafficPolicy: { tls: { mode: SIMPLE, caCertificates: ${caFile}, subjectAltNames: [${san}] } }\n`;
  const call = (): Promise<{ code: string }> => curl(['-x', mesh.proxyOf('foo'), 'http://wildcard.foo:8000/headers']);

  beforeAll(async () => {
    const certs = join(workDir, 'wildcard');
    cpSync(join(workDir, 'certs'), certs, { recursive: true });
    const ca = await certificateAuthority(certs, 'example-ca');
    caFile = ca.certFile;
    const leaf = await signedCertificate(certs, 'wildcard', 'DNS:*.example.com', ca);
    server = createHttpsServer({ key: readFileSync(leaf.keyFile), cert: readFileSync(leaf.certFile) }, (_req, res) => res.end('{"headers":{}}'));
    await new Promise<void>((resolve) => server.listen(9443, WILDCARD_FOO, resolve));
  });

  afterAll(async () => {
    await mesh.remove('dr-wildcard.yaml');
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a name one label under the wildcard is accepted', async () => {
    await mesh.apply('dr-wildcard.yaml', destinationRule('a.example.com'));
    await waitFor(async () => (await call()).code === '200', { timeoutMs: 10_000, description: 'SIMPLE TLS to the wildcard upstream' });
  });

  test('a name two labels under it, or the bare domain, is refused', async () => {
    for (const san of ['nested.sub.example.com', 'example.com']) {
      await mesh.apply('dr-wildcard.yaml', destinationRule(san));
      await waitFor(async () => (await call()).code === '503', { timeoutMs: 10_000, description: `the upstream refused for ${san}` });
    }
    await mesh.apply('dr-wildcard.yaml', destinationRule('b.example.com'));
    await waitFor(async () => (await call()).code === '200', { timeoutMs: 10_000, description: 'accepted again' });
  });
});

describe('1-2. JWT: several keys without kid, several token locations', () => {
  let keys: CryptoKey[];
  let stranger: CryptoKey;
  const sign = (key: CryptoKey, options: { kid?: string; exp?: number } = {}): Promise<string> =>
    new SignJWT({ sub: 'alice' })
      .setProtectedHeader({ alg: 'RS256', ...(options.kid ? { kid: options.kid } : {}) })
      .setIssuer('several-keys@secure.mesh.io')
      .setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600)
      .sign(key);
  const call = (query: string): Promise<{ code: string; body: string }> => curl([`http://${HTTPBIN_FOO}:8080/headers${query}`]);

  beforeAll(async () => {
    const pairs = await Promise.all([generateKeyPair('RS256', { extractable: true }), generateKeyPair('RS256', { extractable: true })]);
    keys = pairs.map((pair) => pair.privateKey);
    stranger = (await generateKeyPair('RS256')).privateKey;
    const jwks = JSON.stringify({ keys: await Promise.all(pairs.map(async (pair) => ({ ...(await exportJWK(pair.publicKey)), alg: 'RS256', use: 'sig' }))) });
    await mesh.apply(
      'ra-several.yaml',
      `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: { name: several, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  jwtRules:\n    - issuer: several-keys@secure.mesh.io\n      jwks: '${jwks}'\n      fromParams: [token, secondary_token]\n`,
    );
    await waitFor(async () => (await call(`?token=${await sign(stranger)}`)).code === '401', {
      timeoutMs: 10_000,
      description: 'the RequestAuthentication to take effect',
    });
  });

  afterAll(async () => {
    await mesh.remove('ra-several.yaml');
  });

  test('a token without kid is accepted whichever key of the set signed it', async () => {
    for (const key of keys) expect((await call(`?token=${await sign(key)}`)).code).toBe('200');
  });

  test('a key the set does not hold: 401 "Jwt verification fails"; a kid naming no key: 401 naming the kid', async () => {
    expect(await call(`?token=${await sign(stranger)}`)).toMatchObject({ code: '401', body: 'Jwt verification fails' });
    expect(await call(`?token=${await sign(keys[0]!, { kid: 'nope' })}`)).toMatchObject({
      code: '401',
      body: "Jwks doesn't have key to match kid or alg from Jwt",
    });
  });

  test('one valid and one expired token in two configured locations: 401; both valid: 200', async () => {
    const good = await sign(keys[0]!);
    const expired = await sign(keys[1]!, { exp: Math.floor(Date.now() / 1000) - 3600 });
    expect((await call(`?token=${good}&secondary_token=${expired}`)).code).toBe('401');
    expect((await call(`?token=${expired}&secondary_token=${good}`)).code).toBe('401');
    expect((await call(`?token=${good}&secondary_token=${await sign(keys[1]!)}`)).code).toBe('200');
  });
});

describe('3. repeated headers in authorization', () => {
  test('DENY on x-user admin refuses guest + admin sent as two headers, on both legs; guest alone passes', async () => {
    const twice = ['-H', 'x-user: guest', '-H', 'x-user: admin'];
    expect((await curl([...twice, `http://${HTTPBIN_FOO}:8080/headers`])).code).toBe('403');
    expect((await curl([...twice, '-x', mesh.proxyOf('foo'), 'http://httpbin.foo:8000/headers'])).code).toBe('403');
    expect((await curl(['-H', 'x-user: admin', `http://${HTTPBIN_FOO}:8080/headers`])).code).toBe('403');
    expect((await curl(['-H', 'x-user: guest', `http://${HTTPBIN_FOO}:8080/headers`])).code).toBe('200');
  });

  test('both values of a repeated header reach the app', async () => {
    const result = await curl(['-H', 'x-team: a', '-H', 'x-team: b', '-x', mesh.proxyOf('foo'), 'http://httpbin.foo:8000/headers']);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['X-Team']).toBe('a, b');
  });
});

describe('4-5. paths: escaped NUL, fragments and the reference normalization tables on both legs', () => {
  type Leg = 'mutual TLS' | 'plain text';
  /** The path the app received for `target`, through the meshed client's sidecar or straight to the PERMISSIVE pod. */
  const received = async (leg: Leg, target: string): Promise<{ status: number; url?: string }> => {
    const response =
      leg === 'mutual TLS'
        ? await rawGet(sidecarOf('foo').host, sidecarOf('foo').port, `http://httpbin.foo:8000${target}`)
        : await rawGet(HTTPBIN_FOO, 8080, target, { host: 'httpbin.foo:8000' });
    let url: string | undefined;
    try {
      url = (JSON.parse(response.body) as { url?: string }).url;
    } catch {
      url = undefined;
    }
    return { status: response.status, ...(url !== undefined ? { url } : {}) };
  };
  const LEGS: Leg[] = ['mutual TLS', 'plain text'];
  const r = String.raw;
  const TABLE: Record<'NONE' | 'BASE' | 'MERGE_SLASHES' | 'DECODE_AND_MERGE_SLASHES', [string, string][]> = {
    NONE: [
      ['/app#foo', '/app'],
      ['/app/../admin', '/app/../admin'],
      ['/app//', '/app//'],
      ['/app/%2f', '/app/%2f'],
      ['/xyz%30..//abc', '/xyz%30..//abc'],
      ['/app/%2E./admin', '/app/%2E./admin'],
      [r`/app\admin`, r`/app\admin`],
      [r`/app/\/\/\admin`, r`/app/\/\/\admin`],
      ['/app//../../admin', '/app//../../admin'],
    ],
    BASE: [
      ['/app#foo', '/app'],
      ['/app/../admin', '/admin'],
      ['/app//', '/app//'],
      ['/app/%2f', '/app/%2f'],
      ['/xyz%30..//abc', '/xyz0..//abc'],
      ['/app/%2E./admin', '/admin'],
      [r`/app\admin`, '/app/admin'],
      [r`/app/\/\/\admin`, '/app//////admin'],
      [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, r`/%5Capp%2f%5c%2F..%2fadmin%5c/abc`],
      ['/app//../../admin', '/admin'],
    ],
    MERGE_SLASHES: [
      ['/app#foo', '/app'],
      ['/app/../admin', '/admin'],
      ['/app//', '/app/'],
      ['/app/%2f', '/app/%2f'],
      ['/xyz%30..//abc', '/xyz0../abc'],
      [r`/app/\/\/\admin`, '/app/admin'],
      ['/app//../admin', '/app/admin'],
    ],
    DECODE_AND_MERGE_SLASHES: [
      ['/app#foo', '/app'],
      ['/app/%2f', '/app/'],
      ['/app%2f/', '/app/'],
      [r`/%2Fapp%5cadmin%5Cabc`, '/app/admin/abc'],
      [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, '/app/admin/abc'],
      ['/%c0%2fadmin', '/%c0/admin'],
      ['/..;/admin', '/..;/admin'],
    ],
  };

  /** A row whose answer tells the mode apart from every other. */
  const PROBE: Record<keyof typeof TABLE, [string, string]> = {
    NONE: ['/app/../admin', '/app/../admin'],
    BASE: ['/xyz%30..//abc', '/xyz0..//abc'],
    MERGE_SLASHES: ['/xyz%30..//abc', '/xyz0../abc'],
    DECODE_AND_MERGE_SLASHES: ['/app/%2f', '/app/'],
  };

  afterAll(async () => {
    await mesh.remove('mesh-config.yaml');
  });

  test.each(LEGS)('%s: /admin%%00 is 400 before the app, whatever the mode', async (leg) => {
    expect((await received(leg, '/admin%00')).status).toBe(400);
    expect((await received(leg, '/ok%2500')).url).toBe('/ok%2500');
  });

  for (const mode of Object.keys(TABLE) as (keyof typeof TABLE)[]) {
    test(`${mode}: the app receives the reference table's path on both legs`, async () => {
      await mesh.apply(
        'mesh-config.yaml',
        `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: mesh, namespace: mesh-system }\ndata:\n  mesh: |\n    pathNormalization: { normalization: ${mode} }\n`,
      );
      const [probe, expected] = PROBE[mode];
      for (const leg of LEGS)
        await waitFor(async () => (await received(leg, probe)).url === expected, { timeoutMs: 10_000, description: `${mode} on the ${leg} leg` });
      for (const leg of LEGS) {
        for (const [input, output] of TABLE[mode])
          expect({ mode, leg, input, url: (await received(leg, input)).url }).toEqual({ mode, leg, input, url: output });
      }
    });
  }
});

describe('header limits', () => {
  test('a 40 KiB Authorization header passes both legs (Envoy allows 60 KiB of headers); 70 KiB is 431', async () => {
    const large = `Basic ${'a'.repeat(40 * 1024)}`;
    const direct = await curl(['-H', `Authorization: ${large}`, `http://${HTTPBIN_FOO}:8080/headers`]);
    expect(direct.code).toBe('200');
    expect(echoedHeaders(direct.body)['Authorization']).toBe(large);
    expect((await curl(['-H', `Authorization: ${large}`, '-x', mesh.proxyOf('foo'), 'http://httpbin.foo:8000/headers'])).code).toBe('200');
    expect((await curl(['-H', `Authorization: Basic ${'a'.repeat(70 * 1024)}`, `http://${HTTPBIN_FOO}:8080/headers`])).code).toBe('431');
  });
});
