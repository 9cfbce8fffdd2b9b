import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { execFile } from 'node:child_process';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { newMetrics, newRealClock, type MeshMetrics } from '../../runtime/index.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { waitFor } from '../../testing/wait-for.js';
import { newCaAuthenticators } from '../authn/ca-authenticators.js';
import { caAuthenticationFromSettings, daemonServingFromSettings } from '../ca-settings.js';
import { newCaServer, type CaServer } from './ca-server.js';
import { newCertificateAuthority, type CertificateAuthority } from '../authority/certificate-authority.js';
import { buildCsr } from '../x509/csr-builder.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { newMeshCertificateClient, type MeshCertificateClient } from './mesh-certificate-proto.js';
import { openSslCipherList } from './tls-cipher-suites.js';
import { decodePemBlocks, encodePem } from '../../pki/index.js';
import { newSelfSignedMaterial } from '../authority/self-signed-root.js';
import { daemonSettings, opensslVerify, removeDir, tempDir } from '../testing/test-support.js';

const HOUR = 3_600_000;
const WEB = 'spiffe://cluster.local/ns/apps/sa/web';

type Outcome = { chain: string[] } | { code: status; details: string };

describe('the certificate service over TLS gRPC', () => {
  const clock = newRealClock();
  const logEntries: LogEntry[] = [];
  const log = newRecordingLogger(logEntries, {}, 'serverca');
  let dir: string;
  let kube: ApiServerDouble;
  let oidc: HttpServer;
  let oidcUrl: string;
  let oidcKey: CryptoKey;
  const oidcHits: string[] = [];
  let metrics: MeshMetrics<'pilot-discovery'>;
  let ca: CertificateAuthority;
  let server: CaServer;
  const abort = new AbortController();
  let running: Promise<void>;
  let client: MeshCertificateClient;
  let workloadKey: KeyObject;

  beforeAll(async () => {
    dir = await tempDir();
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const keys = await generateKeyPair('ES256');
    oidcKey = keys.privateKey;
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    oidc = createServer((req, res) => {
      oidcHits.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: oidcUrl, jwks_uri: `${oidcUrl}/keys` }));
      else if (req.url === '/keys') res.end(JSON.stringify({ keys: [jwk] }));
      else res.writeHead(404).end('{}');
    });
    await new Promise<void>((resolve) => oidc.listen(0, '127.0.0.1', resolve));
    oidcUrl = `http://127.0.0.1:${(oidc.address() as AddressInfo).port}`;

    metrics = newMetrics('pilot-discovery');
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 87600 * HOUR,
      nowMs: clock.now(),
    });
    ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
    const settings = daemonSettings({ TOKEN_ISSUER: oidcUrl, AUDIENCE: 'mesh-oidc' });
    server = newCaServer({
      serving: daemonServingFromSettings(settings),
      ca,
      authenticators: newCaAuthenticators({
        authentication: caAuthenticationFromSettings(settings),
        ca,
        trustDomain: 'cluster.local',
        clock,
        kubeConfig: kube.kubeConfig(),
      }),
      metrics,
      log,
      host: '127.0.0.1',
      port: 0,
      clock,
      knownClusterIds: ['cluster-a'],
    });
    running = server.start(abort.signal);
    await server.waitForReady!(abort.signal);
    client = newMeshCertificateClient(`127.0.0.1:${server.port()}`, credentials.createSsl(Buffer.from(ca.rootBundlePem())));
    workloadKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  });

  afterAll(async () => {
    client?.close();
    abort.abort();
    await running;
    await kube?.close();
    await new Promise((resolve) => oidc?.close(resolve));
    await removeDir(dir);
  });

  const call = async (token: string | undefined, csr: string, ttlSeconds = 3600, via: MeshCertificateClient = client): Promise<Outcome> => {
    const metadata = new Metadata();
    if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
    try {
      return { chain: await via.createCertificate({ csr, validity_duration: ttlSeconds }, metadata, { deadline: new Date(Date.now() + 10_000) }) };
    } catch (err) {
      const e = err as ServiceError;
      return { code: e.code, details: e.details };
    }
  };
  const count = async (name: Parameters<MeshMetrics<'pilot-discovery'>['counter']>[0], labels: Record<string, string> = {}): Promise<number> => {
    const values = (await metrics.counter(name).get()).values;
    return values.filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l)).reduce((sum, v) => sum + v.value, 0);
  };
  const saToken = (audiences = ['mesh-ca'], expirationSeconds = 600): string =>
    kube.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences, expirationSeconds });
  const unauthenticated = { code: status.UNAUTHENTICATED, details: 'request authentication failed' };

  test('a service account token gets a chain for its identity that openssl verifies', async () => {
    const before = { csr: await count('ca_server_csr_count'), ok: await count('ca_server_success_cert_issuance_count') };
    const outcome = await call(saToken(), buildCsr({ key: workloadKey }));
    if (!('chain' in outcome)) throw new Error(`refused: ${outcome.details}`);
    expect(outcome.chain).toHaveLength(2);
    expect(outcome.chain[1]).toBe(ca.rootBundlePem());
    const leaf = new X509Certificate(outcome.chain[0]!);
    expect(leaf.subjectAltName).toBe(`URI:${WEB}`);
    expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(HOUR);
    expect(await opensslVerify(dir, { roots: outcome.chain[1]!, leaf: outcome.chain[0]! })).toMatchObject({ ok: true });
    expect(await count('ca_server_csr_count')).toBe(before.csr + 1);
    expect(await count('ca_server_success_cert_issuance_count')).toBe(before.ok + 1);
  });

  test('a caller claiming a cluster the daemon does not know is refused and counted; its own cluster, or none, is served', async () => {
    const csr = buildCsr({ key: workloadKey, sans: { uris: ['spiffe://cluster.local/ns/apps/sa/web'] } });
    const claiming = async (clusterId: string, where: 'header' | 'request'): Promise<Outcome> => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${saToken()}`);
      if (where === 'header') metadata.set('ClusterID', clusterId);
      const metadataStruct = where === 'request' ? { fields: { ClusterID: { stringValue: clusterId } } } : null;
      try {
        return {
          chain: await client.createCertificate({ csr, validity_duration: 3600, metadata: metadataStruct }, metadata, {
            deadline: new Date(Date.now() + 10_000),
          }),
        };
      } catch (err) {
        return { code: (err as ServiceError).code, details: (err as ServiceError).details };
      }
    };
    const failuresBefore = await count('ca_server_authentication_failure_count');
    expect(await claiming('nope', 'header')).toEqual(unauthenticated);
    expect(await claiming('nope', 'request')).toEqual(unauthenticated);
    expect(await count('ca_server_authentication_failure_count')).toBe(failuresBefore + 2);
    expect(await claiming('cluster-a', 'header')).toHaveProperty('chain');
    expect(await call(saToken(), csr)).toHaveProperty('chain');
  });

  test('a CSR asking for another identity gets the caller identity', async () => {
    const csr = buildCsr({ key: workloadKey, sans: { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'] } });
    const outcome = await call(saToken(), csr);
    expect('chain' in outcome && new X509Certificate(outcome.chain[0]!).subjectAltName).toBe(`URI:${WEB}`);
  });

  test.each([
    ['no token', () => undefined, /no credential/],
    ['a token for another audience', () => saToken(['someone-else']), /audiences/],
    ['an expired token', () => saToken(['mesh-ca'], -60), /expired/],
    ['a garbage token', () => 'not-a-jwt', /token/],
  ])('refused with a generic UNAUTHENTICATED: %s', async (_name, token, logged) => {
    const failures = await count('ca_server_authentication_failure_count');
    logEntries.length = 0;
    expect(await call(token(), buildCsr({ key: workloadKey }))).toEqual(unauthenticated);
    expect(await count('ca_server_authentication_failure_count')).toBe(failures + 1);
    const entry = logEntries.find((e) => e.message === 'certificate request authentication failed');
    expect(JSON.stringify(entry?.fields)).toMatch(logged);
  });

  test('an OIDC token of a service account is accepted; the key set is fetched once', async () => {
    const sign = (claims: Record<string, unknown>, exp = '10m') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(oidcUrl)
        .setAudience('mesh-oidc')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(oidcKey);
    const byClaims = await sign({ sub: 'x', 'kubernetes.io': { namespace: 'data', serviceaccount: { name: 'db' } } });
    const bySubject = await sign({ sub: 'system:serviceaccount:data:cache' });
    const first = await call(byClaims, buildCsr({ key: workloadKey }));
    const second = await call(bySubject, buildCsr({ key: workloadKey }));
    expect('chain' in first && new X509Certificate(first.chain[0]!).subjectAltName).toBe('URI:spiffe://cluster.local/ns/data/sa/db');
    expect('chain' in second && new X509Certificate(second.chain[0]!).subjectAltName).toBe('URI:spiffe://cluster.local/ns/data/sa/cache');
    expect(oidcHits.filter((h) => h === '/keys')).toHaveLength(1);

    // A user (not a service account), an expired token, another audience: refused.
    const user = await sign({ sub: 'alice@example.com' });
    const expired = await new SignJWT({ sub: 'system:serviceaccount:data:db' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(oidcUrl)
      .setAudience('mesh-oidc')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(oidcKey);
    const wrongAudience = await new SignJWT({ sub: 'system:serviceaccount:data:db' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(oidcUrl)
      .setAudience('other')
      .setExpirationTime('10m')
      .sign(oidcKey);
    for (const token of [user, expired, wrongAudience]) {
      expect(await call(token, buildCsr({ key: workloadKey }))).toEqual(unauthenticated);
    }
  });

  test('garbage, a bad signature and a too long TTL are INVALID_ARGUMENT, counted', async () => {
    const parsing = await count('ca_server_csr_parsing_err_count');
    const ttl = await count('ca_server_csr_sign_err_count', { error: 'ttl' });
    const garbage = await call(saToken(), 'garbage');
    expect(garbage).toMatchObject({ code: status.INVALID_ARGUMENT });
    const der = decodePemBlocks(buildCsr({ key: workloadKey }))[0]!.der;
    der[der.length - 3]! ^= 0x01;
    expect(await call(saToken(), encodePem('CERTIFICATE REQUEST', der))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'the certificate request signature does not verify',
    });
    expect(await count('ca_server_csr_parsing_err_count')).toBe(parsing + 2);
    const tooLong = await call(saToken(), buildCsr({ key: workloadKey }), 2160 * 3600 + 1);
    expect(tooLong).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('above the maximum') });
    expect(await count('ca_server_csr_sign_err_count', { error: 'ttl' })).toBe(ttl + 1);
    // Non-positive TTLs get the default.
    const defaulted = await call(saToken(), buildCsr({ key: workloadKey }), 0);
    expect(
      'chain' in defaulted && Date.parse(new X509Certificate(defaulted.chain[0]!).validTo) - Date.parse(new X509Certificate(defaulted.chain[0]!).validFrom),
    ).toBe(24 * HOUR);
  });

  test('a workload renews with its current certificate, without a token', async () => {
    const first = await call(saToken(), buildCsr({ key: workloadKey }));
    if (!('chain' in first)) throw new Error(first.details);
    const mtls = newMeshCertificateClient(
      `127.0.0.1:${server.port()}`,
      credentials.createSsl(Buffer.from(ca.rootBundlePem()), Buffer.from(workloadKey.export({ format: 'pem', type: 'pkcs8' })), Buffer.from(first.chain[0]!)),
    );
    try {
      const newKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const renewed = await call(undefined, buildCsr({ key: newKey }), 3600, mtls);
      expect('chain' in renewed && new X509Certificate(renewed.chain[0]!).subjectAltName).toBe(`URI:${WEB}`);
    } finally {
      mtls.close();
    }
    // A certificate of another CA is no credential.
    const otherMaterial = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: HOUR,
      nowMs: clock.now(),
    });
    const other = newCertificateAuthority({ bundle: loadKeyCertBundle(otherMaterial), clock, defaultTtlMs: HOUR, maxTtlMs: HOUR });
    const foreign = other.signCsr(buildCsr({ key: workloadKey }), WEB, HOUR);
    const stranger = newMeshCertificateClient(
      `127.0.0.1:${server.port()}`,
      credentials.createSsl(Buffer.from(ca.rootBundlePem()), Buffer.from(workloadKey.export({ format: 'pem', type: 'pkcs8' })), Buffer.from(foreign.certPem)),
    );
    try {
      expect(await call(undefined, buildCsr({ key: workloadKey }), 3600, stranger)).toEqual(unauthenticated);
    } finally {
      stranger.close();
    }
  });

  test('the daemon serving certificate names the service, localhost and 127.0.0.1', () => {
    const cert = new X509Certificate(server.daemonCertificate!.current().certChainPem);
    expect(cert.subjectAltName).toBe('DNS:meshd.mesh-system.svc, DNS:meshd.mesh-system.svc.cluster.local, DNS:localhost, IP Address:127.0.0.1');
  });
});

describe('the certificate service with --tlsCertFile and --tlsKeyFile', () => {
  test('serves the certificate from the files, not one the CA issues', async () => {
    const clock = newRealClock();
    const dir = await tempDir();
    const abort = new AbortController();
    try {
      const metrics = newMetrics('pilot-discovery');
      const material = await newSelfSignedMaterial({
        keyType: 'ecdsa-p256',
        rsaKeySize: 2048,
        trustDomain: 'cluster.local',
        ttlMs: 87600 * HOUR,
        nowMs: clock.now(),
      });
      const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
      // A serving certificate from an unrelated CA, as an operator would mount it.
      const other = await newSelfSignedMaterial({ keyType: 'ecdsa-p256', rsaKeySize: 2048, trustDomain: 'example.org', ttlMs: 24 * HOUR, nowMs: clock.now() });
      const otherCa = newCertificateAuthority({ bundle: loadKeyCertBundle(other), clock, defaultTtlMs: HOUR, maxTtlMs: HOUR });
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const issued = otherCa.issue({
        subjectPublicKeyInfo: publicKey.export({ format: 'der', type: 'spki' }),
        sans: { dnsNames: ['meshd.example.org'] },
        ttlMs: HOUR,
      });
      const { writeFile } = await import('node:fs/promises');
      await writeFile(`${dir}/tls.crt`, issued.certPem);
      await writeFile(`${dir}/tls.key`, privateKey.export({ format: 'pem', type: 'pkcs8' }));
      const settings = daemonSettings({});
      const server = newCaServer({
        serving: daemonServingFromSettings(settings),
        ca,
        authenticators: newCaAuthenticators({ authentication: caAuthenticationFromSettings(settings), ca, trustDomain: 'cluster.local', clock }),
        metrics,
        log: newRecordingLogger([]),
        host: '127.0.0.1',
        port: 0,
        clock,
        tlsFiles: { certFile: `${dir}/tls.crt`, keyFile: `${dir}/tls.key` },
      });
      const running = server.start(abort.signal);
      await server.waitForReady!(abort.signal);
      const viaFileRoot = newMeshCertificateClient(`127.0.0.1:${server.port()}`, credentials.createSsl(Buffer.from(otherCa.rootBundlePem())), {
        'grpc.ssl_target_name_override': 'meshd.example.org',
      });
      const viaMeshRoot = newMeshCertificateClient(`127.0.0.1:${server.port()}`, credentials.createSsl(Buffer.from(ca.rootBundlePem())), {
        'grpc.ssl_target_name_override': 'localhost',
      });
      const csr = buildCsr({ key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
      const deadline = { deadline: new Date(Date.now() + 5000) };
      // No token: the TLS handshake succeeded when the service itself answers UNAUTHENTICATED.
      // The files are read asynchronously after the listener binds, so the first handshakes may fail.
      await waitFor(
        async () => {
          const outcome = await viaFileRoot.createCertificate({ csr, validity_duration: 60 }, new Metadata(), deadline).catch((e: ServiceError) => e);
          return (outcome as ServiceError).code === status.UNAUTHENTICATED;
        },
        { timeoutMs: 5000, description: 'a handshake with the certificate from the files' },
      );
      await expect(viaFileRoot.createCertificate({ csr, validity_duration: 60 }, new Metadata(), deadline)).rejects.toMatchObject({
        code: status.UNAUTHENTICATED,
      });
      await expect(viaMeshRoot.createCertificate({ csr, validity_duration: 60 }, new Metadata(), deadline)).rejects.toMatchObject({ code: status.UNAVAILABLE });
      viaFileRoot.close();
      viaMeshRoot.close();
      abort.abort();
      await running;
    } finally {
      abort.abort();
      await removeDir(dir);
    }
  });
});

describe('the certificate service with --tls-cipher-suites', () => {
  /** Runs `openssl s_client` against the server, with no input so it exits after the handshake. */
  const handshake = (port: number, args: string[]): Promise<string> =>
    new Promise((resolve) => {
      const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-alpn', 'h2', ...args], { timeout: 10_000 }, (_err, stdout, stderr) =>
        resolve(`${stdout}\n${stderr}`),
      );
      child.stdin?.end();
    });

  test('offers only the listed TLS 1.2 suites, and keeps TLS 1.3', async () => {
    const clock = newRealClock();
    const abort = new AbortController();
    const metrics = newMetrics('pilot-discovery');
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 87600 * HOUR,
      nowMs: clock.now(),
    });
    const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
    const settings = daemonSettings({});
    const server = newCaServer({
      serving: daemonServingFromSettings(settings),
      ca,
      authenticators: newCaAuthenticators({ authentication: caAuthenticationFromSettings(settings), ca, trustDomain: 'cluster.local', clock }),
      metrics,
      log: newRecordingLogger([]),
      host: '127.0.0.1',
      port: 0,
      clock,
      cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'],
    });
    const running = server.start(abort.signal);
    try {
      await server.waitForReady!(abort.signal);
      const port = server.port();
      const listed = await waitFor(
        async () => {
          const out = await handshake(port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256']);
          return /Cipher is ECDHE-ECDSA-AES128-GCM-SHA256/.test(out) ? out : undefined;
        },
        { timeoutMs: 8000, description: 'a TLS 1.2 handshake with a listed suite' },
      );
      expect(listed).toContain('Protocol  : TLSv1.2');
      const unlisted = await handshake(port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES256-GCM-SHA384']);
      expect(unlisted).not.toMatch(/Cipher is ECDHE-ECDSA-AES256-GCM-SHA384/);
      expect(unlisted).toMatch(/handshake failure|alert|no cipher/i);
      const tls13 = await handshake(port, ['-tls1_3']);
      expect(tls13).toMatch(/TLSv1\.3/);
    } finally {
      abort.abort();
      await running;
    }
  });

  test('an unknown name is a usage error naming the flag', () => {
    expect(() => openSslCipherList(['TLS_NULL_WITH_NULL_NULL'])).toThrow('unknown cipher suite "TLS_NULL_WITH_NULL_NULL" in --tls-cipher-suites');
  });
});
