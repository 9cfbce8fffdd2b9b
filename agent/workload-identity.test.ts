import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { newCaAuthenticators } from '../ca/authn/ca-authenticators.js';
import { caAuthenticationFromSettings, daemonServingFromSettings } from '../ca/ca-settings.js';
import { newCaServer, type CaServer } from '../ca/server/ca-server.js';
import { buildCsr } from '../ca/x509/csr-builder.js';
import { newCertificateAuthority, type CertificateAuthority } from '../ca/authority/certificate-authority.js';
import { loadKeyCertBundle } from '../ca/authority/key-cert-bundle.js';
import { newSelfSignedMaterial } from '../ca/authority/self-signed-root.js';
import { daemonSettings, removeDir, tempDir } from '../ca/testing/test-support.js';
import { newMetrics, newNopLogger, newRealClock } from '../runtime/index.js';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { SECRET_TYPE } from '../xds/envoy/type-urls.js';
import { newSdsServer, type SdsServer } from './sds/sds-server.js';
import { newFileMountedCertificates } from './secrets/file-mounted-certificates.js';
import { newAgentTrustBundle } from './secrets/trust-bundle.js';
import { newWorkloadCertificates, provisionedCertificateFiles, type WorkloadCertificates } from './secrets/workload-certificates.js';
import { newTestAuthority } from '../ca/testing/test-authority.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';

// The agent's identity against a real CA on loopback: certificate fetched with a token, served
// over SDS to a gRPC client on a Unix socket, rotated with the new secret pushed, CA outage and recovery.
const HOUR = 3_600_000;
const clock = newRealClock();
const protos = loadEnvoyProtos();
let dir: string;
let oidc: HttpServer;
let oidcUrl: string;
let oidcKey: CryptoKey;
let ca: CertificateAuthority;
let caServer: CaServer;
let caAbort: AbortController;
let caRunning: Promise<void>;
let caPort: number;

function startCa(port: number): Promise<void> {
  const settings = daemonSettings({ TOKEN_ISSUER: oidcUrl, AUDIENCE: 'mesh-ca' });
  caAbort = new AbortController();
  caServer = newCaServer({
    serving: daemonServingFromSettings(settings),
    ca,
    authenticators: newCaAuthenticators({ authentication: caAuthenticationFromSettings(settings), ca, trustDomain: 'cluster.local', clock }),
    metrics: newMetrics('pilot-discovery'),
    log: newNopLogger('serverca'),
    host: '127.0.0.1',
    port,
    clock,
    shutdownTimeoutMs: 200,
  });
  caRunning = caServer.start(caAbort.signal);
  return caServer.waitForReady!(caAbort.signal);
}

const token = (): Promise<string> =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(oidcUrl)
    .setSubject('system:serviceaccount:foo:sleep')
    .setAudience('mesh-ca')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(oidcKey);

function certificates(options: { ttlMs: number; keyType?: 'ecdsa' | 'rsa'; pkcs8?: boolean; outputDir?: string }): WorkloadCertificates {
  return newWorkloadCertificates({
    caAddress: `127.0.0.1:${caPort}`,
    caTrust: newAgentTrustBundle({ initialPem: ca.rootBundlePem(), clock, log: newNopLogger('cache') }),
    token,
    spiffeId: 'spiffe://cluster.local/ns/foo/sa/sleep',
    ttlMs: options.ttlMs,
    graceRatio: 0.5,
    keyType: options.keyType ?? 'ecdsa',
    pkcs8: options.pkcs8 ?? false,
    ...(options.outputDir ? { outputDir: options.outputDir } : {}),
    clock,
    log: newNopLogger('cache'),
  });
}

beforeAll(async () => {
  dir = await tempDir('agent-identity-');
  const keys = await generateKeyPair('ES256');
  oidcKey = keys.privateKey;
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  oidc = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: oidcUrl, jwks_uri: `${oidcUrl}/keys` }));
    else if (req.url === '/keys') res.end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((resolve) => oidc.listen(0, '127.0.0.1', resolve));
  oidcUrl = `http://127.0.0.1:${(oidc.address() as AddressInfo).port}`;
  const material = await newSelfSignedMaterial({
    keyType: 'ecdsa-p256',
    rsaKeySize: 2048,
    trustDomain: 'cluster.local',
    ttlMs: 1000 * HOUR,
    nowMs: clock.now(),
  });
  ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: HOUR, maxTtlMs: 2160 * HOUR });
  await startCa(0);
  caPort = caServer.port();
});

afterAll(async () => {
  caAbort.abort();
  await caRunning;
  await new Promise((resolve) => oidc.close(resolve));
  await removeDir(dir);
});

describe('workload certificates', () => {
  test('an ECDSA key and a chain for the SPIFFE id, written to OUTPUT_CERTS', async () => {
    const manager = certificates({ ttlMs: HOUR, outputDir: join(dir, 'out') });
    try {
      const secrets = await manager.start();
      const leaf = new X509Certificate(secrets.certificateChain);
      expect(leaf.subjectAltName).toBe('URI:spiffe://cluster.local/ns/foo/sa/sleep');
      expect(leaf.verify(new X509Certificate(ca.rootBundlePem()).publicKey)).toBe(true);
      expect(secrets.privateKey).toContain('BEGIN EC PRIVATE KEY');
      for (const file of ['cert-chain.pem', 'key.pem', 'root-cert.pem']) expect(existsSync(join(dir, 'out', file))).toBe(true);
      expect(readFileSync(join(dir, 'out', 'root-cert.pem'), 'utf8')).toBe(secrets.roots);
    } finally {
      manager.stop();
    }
  });

  test('RSA 2048 with a PKCS#8 key', async () => {
    const manager = certificates({ ttlMs: HOUR, keyType: 'rsa', pkcs8: true });
    try {
      const secrets = await manager.start();
      expect(secrets.privateKey).toContain('BEGIN PRIVATE KEY');
      expect(new X509Certificate(secrets.certificateChain).publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    } finally {
      manager.stop();
    }
  });
});

describe('PROV_CERT: a provisioned certificate instead of a token', () => {
  const noToken = async (): Promise<string> => {
    throw new Error('ENOENT: no token file');
  };
  const provisioned = (name: string, signer: { signCsr: CertificateAuthority['signCsr'] }): string => {
    const folder = join(dir, name);
    mkdirSync(folder, { recursive: true });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(join(folder, 'key.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));
    writeFileSync(join(folder, 'cert-chain.pem'), signer.signCsr(buildCsr({ key: privateKey }), 'spiffe://cluster.local/ns/vm/sa/vm-app', HOUR).certPem);
    return folder;
  };
  const manager = (folder: string, entries: LogEntry[] = []): WorkloadCertificates =>
    newWorkloadCertificates({
      caAddress: `127.0.0.1:${caPort}`,
      caTrust: newAgentTrustBundle({ initialPem: ca.rootBundlePem(), clock, log: newNopLogger('cache') }),
      token: noToken,
      provisionedCertificate: provisionedCertificateFiles(folder),
      spiffeId: 'spiffe://cluster.local/ns/vm/sa/vm-app',
      ttlMs: HOUR,
      graceRatio: 0.5,
      keyType: 'ecdsa',
      pkcs8: false,
      clock,
      log: newRecordingLogger(entries),
    });

  test('the CA issues the workload certificate to the identity of the provisioned one, over mutual TLS, without a token', async () => {
    const certificates = manager(provisioned('prov', ca));
    try {
      const secrets = await certificates.start();
      expect(new X509Certificate(secrets.certificateChain).subjectAltName).toBe('URI:spiffe://cluster.local/ns/vm/sa/vm-app');
    } finally {
      certificates.stop();
    }
  });

  test('a provisioned certificate of another CA is refused', async () => {
    const entries: LogEntry[] = [];
    const stranger = await newTestAuthority('cluster.local');
    const certificates = manager(provisioned('prov-foreign', stranger.ca), entries);
    const started = certificates.start();
    started.catch(() => undefined);
    try {
      const refusal = await waitFor(() => entries.find((entry) => entry.message === 'cannot get a workload certificate yet'), {
        timeoutMs: 10_000,
        description: 'the refusal',
      });
      expect(String(refusal.fields['error'])).toMatch(/UNAUTHENTICATED/);
      expect(certificates.current()).toBeUndefined();
    } finally {
      certificates.stop();
    }
  });

  test('a missing provisioned file is named', async () => {
    await expect(provisionedCertificateFiles(join(dir, 'no-such-folder'))()).rejects.toThrow(/PROV_CERT .*no-such-folder: cannot read key\.pem/);
  });
});

describe('SDS on a Unix socket', () => {
  let manager: WorkloadCertificates;
  let sds: SdsServer;
  let client: Client;
  let stream: ClientDuplexStream<object, { version_info: string; nonce: string; resources: { type_url: string; value: Buffer }[] }>;
  const received: { version: string; secrets: Record<string, unknown>[] }[] = [];

  beforeAll(async () => {
    // A 4 s certificate renewed at half its life: rotation within the test.
    manager = certificates({ ttlMs: 4000 });
    const socketPath = join(dir, 'sds', 'socket');
    sds = newSdsServer({ protos, socketPath, current: () => manager.current(), log: newNopLogger('sds') });
    manager.onChange(() => sds.push());
    await sds.start();
    await manager.start();
    const Ctor = makeGenericClientConstructor(protos.serviceDefinition('envoy.service.secret.v3.SecretDiscoveryService'), 'SecretDiscoveryService');
    client = new Ctor(`unix:${socketPath}`, credentials.createInsecure());
    stream = (client as unknown as { StreamSecrets(m: Metadata): typeof stream }).StreamSecrets(new Metadata());
    stream.on('data', (response) => {
      received.push({
        version: response.version_info,
        secrets: response.resources.map((any: { type_url: string; value: Buffer }) => protos.decodeAny({ type_url: any.type_url, value: any.value })),
      });
      stream.write({ type_url: SECRET_TYPE, resource_names: ['default', 'ROOTCA'], version_info: response.version_info, response_nonce: response.nonce });
    });
    stream.on('error', () => undefined);
    stream.write({ node: { id: 'sidecar~127.0.0.1~sleep.foo~foo.svc.cluster.local' }, type_url: SECRET_TYPE, resource_names: ['default', 'ROOTCA'] });
  });

  afterAll(async () => {
    stream?.cancel();
    client?.close();
    manager?.stop();
    await sds?.stop();
  });

  const chainOf = (entry: { secrets: Record<string, unknown>[] }): string => {
    const secret = entry.secrets.find((candidate) => candidate['name'] === 'default') as { tls_certificate: { certificate_chain: { inline_bytes: string } } };
    return Buffer.from(secret.tls_certificate.certificate_chain.inline_bytes, 'base64').toString();
  };

  test('serves default (key and chain) and ROOTCA', async () => {
    await waitFor(() => received.length > 0, { description: 'the first SDS response' });
    const first = received[0] as (typeof received)[number];
    expect(first.secrets.map((secret) => secret['name']).sort()).toEqual(['ROOTCA', 'default']);
    expect(chainOf(first)).toBe(manager.current()?.certificateChain);
    const root = first.secrets.find((secret) => secret['name'] === 'ROOTCA') as { validation_context: { trusted_ca: { inline_bytes: string } } };
    expect(Buffer.from(root.validation_context.trusted_ca.inline_bytes, 'base64').toString()).toBe(ca.rootBundlePem());
  });

  test('a rotation pushes the new certificate to the open stream', async () => {
    const first = chainOf(received[0] as (typeof received)[number]);
    await waitFor(() => received.some((entry) => chainOf(entry) !== first), { timeoutMs: 10_000, description: 'a rotated certificate over SDS' });
  });

  test('a CA outage keeps the current certificate and the manager recovers when the CA is back', async () => {
    caAbort.abort();
    await caRunning;
    const during = manager.current()?.certificateChain;
    expect(during).toBeDefined();
    const seen = received.length;
    await startCa(caPort);
    await waitFor(() => received.length > seen && chainOf(received[received.length - 1] as (typeof received)[number]) !== during, {
      timeoutMs: 15_000,
      description: 'a certificate after the CA came back',
    });
  });
});

describe('renewal time', () => {
  test('a certificate is renewed at SECRET_GRACE_PERIOD_RATIO of its lifetime within 1 %, never at 45 %', async () => {
    // The agent on a fake clock: time moves only when the test says; the CA is real.
    const fake = new FakeClock(Date.now());
    const fetched: number[] = [];
    const manager = newWorkloadCertificates({
      caAddress: `127.0.0.1:${caPort}`,
      caTrust: newAgentTrustBundle({ initialPem: ca.rootBundlePem(), clock, log: newNopLogger('cache') }),
      token,
      spiffeId: 'spiffe://cluster.local/ns/foo/sa/sleep',
      ttlMs: HOUR,
      graceRatio: 0.5,
      keyType: 'ecdsa',
      pkcs8: false,
      clock: fake,
      log: newNopLogger('cache'),
    });
    try {
      const first = await manager.start();
      manager.onChange(() => fetched.push(fake.now()));
      const lifetime = first.notAfter - (first.obtainedAt ?? 0);
      fake.advance(Math.floor(lifetime * 0.45));
      fake.advance(Math.floor(lifetime * 0.04) - 1);
      // The renewal timer has not fired: it is still the one pending timer.
      expect(fake.pendingTimers()).toBe(1);
      expect(fetched).toHaveLength(0);
      fake.advance(Math.ceil(lifetime * 0.02) + 2);
      await waitFor(() => fetched.length > 0, { timeoutMs: 10_000, description: 'the renewal' });
    } finally {
      manager.stop();
    }
  });
});

describe('renewal while the CA is down', () => {
  test('every retry lands while the certificate is still valid, so a CA back in its last stretch renews it before it expires', async () => {
    // Regression: retries backed off exponentially to 60 s regardless of the certificate, so a CA
    // back shortly before expiry was asked again only after it, and the agent served an expired
    // certificate meanwhile (found with 16 s certificates in e2e/faults-ca.e2e.test.ts's set-up).
    const fake = new FakeClock(Date.now());
    const entries: LogEntry[] = [];
    const manager = newWorkloadCertificates({
      caAddress: `127.0.0.1:${caPort}`,
      caTrust: newAgentTrustBundle({ initialPem: ca.rootBundlePem(), clock, log: newNopLogger('cache') }),
      token,
      spiffeId: 'spiffe://cluster.local/ns/foo/sa/sleep',
      ttlMs: 100_000,
      graceRatio: 0.5,
      keyType: 'ecdsa',
      pkcs8: false,
      clock: fake,
      log: newRecordingLogger(entries),
    });
    const failures = (): LogEntry[] => entries.filter((entry) => entry.message === 'cannot renew the workload certificate; retrying');
    let caStopped = false;
    try {
      const first = await manager.start();
      caAbort.abort();
      await caRunning;
      caStopped = true;
      fake.advance(Math.ceil((first.notAfter - fake.now()) * 0.52));
      await waitFor(() => failures().length === 1, { timeoutMs: 10_000, description: 'the failed renewal' });
      const retries: number[] = [];
      // Retry while more than 5 % of the lifetime is left: none may be planned past the expiry.
      while (first.notAfter - fake.now() > 5_000) {
        const retryMs = Number(failures().at(-1)?.fields['retryMs']);
        retries.push(retryMs);
        expect(fake.now() + retryMs).toBeLessThan(first.notAfter);
        const seen = failures().length;
        fake.advance(retryMs);
        await waitFor(() => failures().length > seen, { timeoutMs: 10_000, description: 'a failed retry' });
      }
      // Backing off all the same: the first retries grow.
      expect(retries.slice(0, 4)).toEqual([1000, 2000, 4000, 8000]);
      await startCa(caPort);
      caStopped = false;
      fake.advance(Number(failures().at(-1)?.fields['retryMs']));
      await waitFor(() => manager.current()?.certificateChain !== first.certificateChain, {
        timeoutMs: 10_000,
        description: 'the renewal once the CA is back',
      });
      expect(fake.now()).toBeLessThan(first.notAfter);
    } finally {
      manager.stop();
      if (caStopped) await startCa(caPort);
    }
  });
});

describe('FILE_MOUNTED_CERTS', () => {
  test('certificates come from the mounted files, and a change on disk is published', async () => {
    const mounted = join(dir, 'mounted');
    mkdirSync(mounted, { recursive: true });
    const write = (identity: string): string => {
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const issued = ca.signCsr(buildCsr({ key }), identity, HOUR);
      writeFileSync(join(mounted, 'cert-chain.pem'), issued.certPem);
      writeFileSync(join(mounted, 'key.pem'), key.export({ format: 'pem', type: 'pkcs8' }).toString());
      writeFileSync(join(mounted, 'root-cert.pem'), ca.rootBundlePem());
      return issued.certPem;
    };
    const first = write('spiffe://cluster.local/ns/vm/sa/legacy-app');
    const manager = newFileMountedCertificates({ dir: mounted, pollMs: 20, clock, log: newNopLogger('cache') });
    try {
      const changes: string[] = [];
      manager.onChange((secrets) => changes.push(secrets.certificateChain));
      expect((await manager.start()).certificateChain).toBe(first);
      const second = write('spiffe://cluster.local/ns/vm/sa/legacy-app');
      await waitFor(() => changes.includes(second), { description: 'the rotated file published' });
    } finally {
      manager.stop();
    }
  });
});
