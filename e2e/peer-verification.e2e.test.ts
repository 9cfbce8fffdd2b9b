import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl, echoedHeaders } from '../testing/curl.js';
import { selfSignedCertificate, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// A mesh is trusted with other people's traffic: every place that terminates or originates mutual
// TLS must verify the peer's chain against the trust bundle, not only its SAN. Each path is tried
// with a certificate an attacker can make (self-signed, claiming a mesh identity) and with one the
// mesh's CA signed, through the local mesh with the real curl.

const HTTPBIN_FOO = '127.0.1.10';
const IMPOSTOR_FOO = '127.0.1.30';
const GATEWAY = '127.0.9.10';
const SLEEP_ID = 'URI:spiffe://cluster.local/ns/foo/sa/sleep';

/** The samples plus: a TCP port on httpbin of foo, an unmeshed impostor behind a MESH_MUTUAL DestinationRule, an mTLS gateway server. */
const EXTRA_CONFIG = `apiVersion: v1
kind: Service
metadata: { name: tcpbin, namespace: foo }
spec:
  selector: { app: httpbin }
  ports: [{ name: tcp, port: 9000, targetPort: 9000, protocol: TCP }]
---
apiVersion: v1
kind: Pod
metadata: { name: impostor-foo, namespace: foo, labels: { app: impostor } }
spec: { serviceAccountName: httpbin, containers: [{ name: impostor }] }
status: { podIP: ${IMPOSTOR_FOO} }
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
metadata: { name: default, namespace: mesh-system }
spec: { mtls: { mode: STRICT } }
`;

let workDir: string;
let mesh: LocalMesh;
let forged: KeyAndCert;
let genuine: KeyAndCert;
let forgedServer: KeyAndCert;
let genuineServer: KeyAndCert;
let impostor: HttpsServer | undefined;

/** Serves `/headers` over TLS on the impostor's pod address with the given certificate (asking for a client one). */
async function startImpostor(identity: KeyAndCert): Promise<void> {
  await stopImpostor();
  const server = createHttpsServer({ key: readFileSync(identity.keyFile), cert: readFileSync(identity.certFile), requestCert: true, rejectUnauthorized: false }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ headers: { impostor: 'yes' } }));
  });
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

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'peer-verification-'));
  const samples = join(workDir, 'samples');
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), samples, { recursive: true });
  const foo = join(samples, 'workloads-foo.yaml');
  writeFileSync(foo, readFileSync(foo, 'utf8').replace('- containerPort: 8080', '- containerPort: 8080\n        - containerPort: 9000'));
  writeFileSync(join(samples, 'security-extra.yaml'), EXTRA_CONFIG);
  mesh = await startLocalMesh({ workDir: join(workDir, 'mesh'), samples });
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

describe('sidecar inbound under STRICT', () => {
  test('HTTP port: a self-signed certificate claiming a mesh identity is refused, no request reaches the app', async () => {
    const result = await curl([...withCert(forged), '--http1.1', `https://${HTTPBIN_FOO}:8080/headers`]);
    expect(result.code).toBe('000');
    expect(result.exit).not.toBe(0);
  });

  test('HTTP port: a certificate of the mesh CA is served, with its identity in XFCC', async () => {
    const result = await curl([...withCert(genuine), '--http1.1', `https://${HTTPBIN_FOO}:8080/headers`]);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
  });

  test('HTTP/2 negotiated by ALPN over mutual TLS is answered', async () => {
    const result = await curl([...withCert(genuine), '--http2', `https://${HTTPBIN_FOO}:8080/headers`]);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
    const forgedH2 = await curl([...withCert(forged), '--http2', `https://${HTTPBIN_FOO}:8080/headers`]);
    expect(forgedH2.code).toBe('000');
  });

  test('TCP port: a self-signed certificate is refused, a mesh one is proxied', async () => {
    expect((await curl([...withCert(forged), '--http1.1', `https://${HTTPBIN_FOO}:9000/ip`])).code).toBe('000');
    expect((await curl([...withCert(genuine), '--http1.1', `https://${HTTPBIN_FOO}:9000/ip`])).code).toBe('200');
  });
});

describe('sidecar outbound (the client side)', () => {
  test('an upstream presenting a self-signed certificate with the expected SAN is refused', async () => {
    await startImpostor(forgedServer);
    const result = await curl(['-x', mesh.proxyOf('foo'), 'http://impostor.foo:8000/headers']);
    expect(result.code).toBe('503');
  });

  test('the same upstream with a certificate of the mesh CA is reached', async () => {
    await startImpostor(genuineServer);
    const result = await curl(['-x', mesh.proxyOf('foo'), 'http://impostor.foo:8000/headers']);
    expect(result.code).toBe('200');
    expect(echoedHeaders(result.body)['impostor']).toBe('yes');
  });
});

describe('ingress gateway with a MESH_MUTUAL server', () => {
  test('a self-signed client certificate is refused, a mesh one is routed', async () => {
    expect((await curl([...withCert(forged), `https://${GATEWAY}:8443/headers`])).code).toBe('000');
    const result = await curl([...withCert(genuine), `https://${GATEWAY}:8443/headers`]);
    expect(result.code).toBe('200');
  });

  test('no client certificate is refused', async () => {
    expect((await curl(['-k', `https://${GATEWAY}:8443/headers`])).code).toBe('000');
  });
});
