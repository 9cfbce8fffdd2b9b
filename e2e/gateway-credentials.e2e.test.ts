import { X509Certificate } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { certificateAuthority, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// Gateway TLS with `credentialName` through the local mesh (config folder): the daemon serves
// the gateway's Secrets (of its own namespace, mesh-system) over ADS, the gateway terminates TLS
// with them, chosen by SNI, and the real curl checks the result. Config-folder mode, then
// Kubernetes mode (the Secrets applied with kubectl to the API server double).
const PORT = 9443;
const FOREIGN_PORT = 9444;

let workDir: string;
let serverCa: KeyAndCert;
let clientCa: KeyAndCert;
let client: KeyAndCert;
let simple: KeyAndCert;
let rotated: KeyAndCert;
let mismatched: KeyAndCert;

const indent = (file: string): string =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
const tlsSecret = (name: string, namespace: string, cert: KeyAndCert, ca?: KeyAndCert, key: KeyAndCert = cert): string =>
  `apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\nmetadata: { name: ${name}, namespace: ${namespace} }\nstringData:\n  tls.crt: |\n${indent(cert.certFile)}\n  tls.key: |\n${indent(key.keyFile)}\n${ca ? `  ca.crt: |\n${indent(ca.certFile)}\n` : ''}`;

const gatewayConfig = (): string => `apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata: { name: credentials, namespace: foo }
spec:
  selector: { mesh: ingressgateway }
  servers:
    - port: { number: ${PORT}, name: https-simple, protocol: HTTPS }
      hosts: ["simple.example.com"]
      tls: { mode: SIMPLE, credentialName: gw-simple }
    - port: { number: ${PORT}, name: https-mutual, protocol: HTTPS }
      hosts: ["mutual.example.com"]
      tls: { mode: MUTUAL, credentialName: gw-mutual }
    - port: { number: ${FOREIGN_PORT}, name: https-foreign, protocol: HTTPS }
      hosts: ["foreign.example.com"]
      tls: { mode: SIMPLE, credentialName: bar/only-in-bar }
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: { name: credentials, namespace: foo }
spec:
  hosts: ["simple.example.com", "mutual.example.com", "foreign.example.com"]
  gateways: [credentials]
  http:
    - route: [{ destination: { host: httpbin.foo.svc.cluster.local, port: { number: 8000 } } }]
---
${tlsSecret('gw-mutual', 'mesh-system', signedCertificateFor('mutual'), clientCa)}---
${tlsSecret('only-in-bar', 'bar', signedCertificateFor('foreign'))}`;

const made = new Map<string, KeyAndCert>();
function signedCertificateFor(name: string): KeyAndCert {
  const cert = made.get(name);
  if (!cert) throw new Error(`no certificate ${name}`);
  return cert;
}

const httpsVia =
  (gateway: string) =>
  (host: string, port: number, extra: string[] = []) =>
    curl(['--cacert', serverCa.certFile, '--resolve', `${host}:${port}:${gateway}`, ...extra, `https://${host}:${port}/headers`]);

/** The SHA-256 fingerprint of the certificate a new handshake with this SNI name gets. */
function servedFingerprint(gateway: string, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: gateway, port: PORT, servername, ca: readFileSync(serverCa.certFile), ALPNProtocols: ['http/1.1'] }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.destroy();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

/** One GET over a keep-alive agent: the status and whether an already open connection carried it. */
function getOver(gateway: string, agent: Agent): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: gateway,
        port: PORT,
        servername: 'simple.example.com',
        headers: { host: 'simple.example.com' },
        path: '/headers',
        agent,
        ca: readFileSync(serverCa.certFile),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Node's X509Certificate gives the same colon-separated form as getPeerCertificate(). */
function pemFingerprint(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'gateway-credentials-e2e-'));
  const certs = join(workDir, 'certs');
  mkdirSync(certs);
  serverCa = await certificateAuthority(certs, 'server-ca');
  clientCa = await certificateAuthority(certs, 'client-ca');
  client = await signedCertificate(certs, 'client', 'DNS:client.example.com', clientCa);
  simple = await signedCertificate(certs, 'simple', 'DNS:simple.example.com', serverCa);
  rotated = await signedCertificate(certs, 'simple-rotated', 'DNS:simple.example.com', serverCa);
  mismatched = await signedCertificate(certs, 'mismatched', 'DNS:simple.example.com', serverCa);
  made.set('mutual', await signedCertificate(certs, 'mutual', 'DNS:mutual.example.com', serverCa));
  made.set('foreign', await signedCertificate(certs, 'foreign', 'DNS:foreign.example.com', serverCa));
  const samples = join(workDir, 'samples');
  mkdirSync(samples);
  // The gateway and the backend it routes to (httpbin of foo); namespace bar holds the foreign Secret.
  for (const file of ['namespaces.yaml', 'ingress.yaml', 'workloads-foo.yaml']) cpSync(join(PROJECT_ROOT, 'deploy/samples/config', file), join(samples, file));
  writeFileSync(join(samples, 'gateway-credentials.yaml'), gatewayConfig());
  writeFileSync(join(samples, 'gw-simple.yaml'), tlsSecret('gw-simple', 'mesh-system', simple));
}, 30_000);

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe.each([
  ['config folder', 'folder', 33],
  ['Kubernetes', 'kubernetes', 34],
] as const)('gateway TLS with credentialName (%s)', (_mode, orchestrator, block) => {
  const gateway = `127.${block}.9.10`;
  const https = httpsVia(gateway);
  const daemonLines: string[] = [];
  let mesh: LocalMesh;

  beforeAll(async () => {
    mesh = await startLocalMesh({
      workDir: join(workDir, `mesh-${orchestrator}`),
      samples: join(workDir, 'samples'),
      addressBlock: block,
      orchestrator,
      log: (line) => void (line.startsWith('[meshd]') && daemonLines.push(line)),
    });
    await mesh.waitReady(30_000);
  }, 90_000);

  afterAll(async () => {
    await mesh?.stop();
  });

  test('SIMPLE: curl --cacert gets through with the Secret’s certificate', async () => {
    await waitFor(async () => (await https('simple.example.com', PORT)).code === '200', { timeoutMs: 15_000, description: 'SIMPLE with credentialName' });
    expect(await servedFingerprint(gateway, 'simple.example.com')).toBe(pemFingerprint(readFileSync(simple.certFile, 'utf8')));
  });

  test('MUTUAL on the same port (chosen by SNI): no client certificate fails, one of the Secret’s CA succeeds', async () => {
    await waitFor(async () => (await https('mutual.example.com', PORT, ['--cert', client.certFile, '--key', client.keyFile])).code === '200', {
      timeoutMs: 15_000,
      description: 'MUTUAL with a client certificate',
    });
    const without = await https('mutual.example.com', PORT);
    expect(without.code).toBe('000');
    expect(without.exit).not.toBe(0);
    // A client certificate of another CA (the server CA signed this one) is refused too.
    const stranger = await https('mutual.example.com', PORT, ['--cert', simple.certFile, '--key', simple.keyFile]);
    expect(stranger.code).toBe('000');
  });

  test('a Gateway naming a Secret of another namespace never gets it: the listener cannot serve and the daemon logs the refusal', async () => {
    await waitFor(() => daemonLines.some((line) => line.includes('refused secrets') && line.includes('kubernetes://bar/only-in-bar')), {
      timeoutMs: 15_000,
      description: 'the refusal logged',
    });
    const result = await https('foreign.example.com', FOREIGN_PORT);
    expect(result.code).toBe('000');
    expect(result.exit).not.toBe(0);
  });

  test('the data plane’s config dump lists the Secrets with the private key redacted', async () => {
    const response = await fetch(`http://${gateway}:15000/config_dump`);
    const text = await response.text();
    const dump = JSON.parse(text) as {
      configs: { '@type': string; dynamic_active_secrets?: { name: string; secret: { tls_certificate?: { private_key: { inline_bytes: string } } } }[] }[];
    };
    const secrets = dump.configs.find((config) => config['@type'].endsWith('SecretsConfigDump'))?.dynamic_active_secrets ?? [];
    const simpleSecret = secrets.find((secret) => secret.name === 'kubernetes://gw-simple');
    expect(Buffer.from(simpleSecret?.secret.tls_certificate?.private_key.inline_bytes ?? '', 'base64').toString()).toBe('[redacted]');
    expect(secrets.map((secret) => secret.name)).not.toContain('kubernetes://bar/only-in-bar');
    const key = readFileSync(simple.keyFile, 'utf8');
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toContain(Buffer.from(key).toString('base64').slice(0, 40));
  });

  test('the daemon’s debug views never show the key: its config dump of the gateway redacts it', async () => {
    const key = readFileSync(simple.keyFile, 'utf8');
    const views = await Promise.all(
      ['/debug/config_dump?proxyID=mesh-ingressgateway.mesh-system', '/debug/adsz', '/debug/configz', '/debug/syncz'].map(async (path) => {
        const response = await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}${path}`);
        return { path, status: response.status, text: await response.text() };
      }),
    );
    const dump = views[0];
    expect(dump?.status).toBe(200);
    expect(dump?.text).toContain('kubernetes://gw-simple');
    expect(dump?.text).toContain('[redacted]');
    for (const view of views) {
      expect(view.text).not.toContain('PRIVATE KEY');
      expect(view.text).not.toContain(Buffer.from(key).toString('base64').slice(0, 40));
    }
  });

  test('rotation: an updated Secret reaches the gateway, new handshakes see it, nothing restarts', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await getOver(gateway, agent)).toEqual({ status: 200, reused: false });
      await mesh.apply('gw-simple.yaml', tlsSecret('gw-simple', 'mesh-system', rotated));
      const expected = pemFingerprint(readFileSync(rotated.certFile, 'utf8'));
      await waitFor(async () => (await servedFingerprint(gateway, 'simple.example.com')) === expected, {
        timeoutMs: 15_000,
        description: 'the rotated certificate served',
      });
      expect((await https('simple.example.com', PORT)).code).toBe('200');
      // The connection opened before the rotation is still served: the gateway did not restart.
      expect(await getOver(gateway, agent)).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  test('a bad update (key of another certificate) is refused by name and field; the last good certificate keeps serving', async () => {
    await mesh.apply('gw-simple.yaml', tlsSecret('gw-simple', 'mesh-system', simple, undefined, mismatched));
    await waitFor(() => daemonLines.some((line) => line.includes('gw-simple') && line.includes('data.tls.key')), {
      timeoutMs: 15_000,
      description: 'the bad secret logged',
    });
    expect(await servedFingerprint(gateway, 'simple.example.com')).toBe(pemFingerprint(readFileSync(rotated.certFile, 'utf8')));
    expect((await https('simple.example.com', PORT)).code).toBe('200');
  });
});
