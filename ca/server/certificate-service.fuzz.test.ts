import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import fc from 'fast-check';
import { newMetrics, newNopLogger, newRealClock } from '../../runtime/index.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { fuzzParameters } from '../../testing/fuzz.js';
import { newCaAuthenticators } from '../authn/ca-authenticators.js';
import { newCertificateAuthority, type CertificateAuthority } from '../authority/certificate-authority.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { newSelfSignedMaterial } from '../authority/self-signed-root.js';
import { caAuthenticationFromSettings, daemonServingFromSettings } from '../ca-settings.js';
import { daemonSettings } from '../testing/test-support.js';
import { buildCsr } from '../x509/csr-builder.js';
import { newCaServer, type CaServer } from './ca-server.js';
import { newMeshCertificateClient, type MeshCertificateClient } from './mesh-certificate-proto.js';

// The certificate service over TLS gRPC under fuzzing: any CSR text (random, truncated, a valid
// one for another identity), any validity, any token or cluster claim gets a chain for the
// caller's own identity or a gRPC status naming the refusal, never a crash; a valid request is
// still served afterwards.
const HOUR = 3_600_000;
const REFUSALS = new Set([status.INVALID_ARGUMENT, status.UNAUTHENTICATED, status.PERMISSION_DENIED]);

describe('the certificate service under fuzzing', () => {
  const clock = newRealClock();
  const abort = new AbortController();
  let kube: ApiServerDouble;
  let ca: CertificateAuthority;
  let server: CaServer;
  let running: Promise<void>;
  let client: MeshCertificateClient;
  let validCsr: string;

  beforeAll(async () => {
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const metrics = newMetrics('pilot-discovery');
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 87600 * HOUR,
      nowMs: clock.now(),
    });
    ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
    const settings = daemonSettings();
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
      log: newNopLogger(),
      host: '127.0.0.1',
      port: 0,
      clock,
      knownClusterIds: ['cluster-a'],
    });
    running = server.start(abort.signal);
    await server.waitForReady?.(abort.signal);
    client = newMeshCertificateClient(`127.0.0.1:${server.port()}`, credentials.createSsl(Buffer.from(ca.rootBundlePem())));
    validCsr = buildCsr({ key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
  });

  afterAll(async () => {
    client?.close();
    abort.abort();
    await running;
    await kube?.close();
  });

  const token = (): string => kube.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'], expirationSeconds: 600 });

  test('any request gets a chain for the caller or a refusal status; the service keeps serving', async () => {
    const csr = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.constant('').map(() => validCsr),
      fc.nat({ max: 400 }).map((n) => validCsr.slice(0, n)),
      fc.tuple(fc.nat({ max: 300 }), fc.string({ minLength: 1, maxLength: 1 })).map(([at, c]) => `${validCsr.slice(0, at)}${c}${validCsr.slice(at + 1)}`),
      fc
        .constant('')
        .map(() =>
          buildCsr({ key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, sans: { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'] } }),
        ),
    );
    const validity = fc.oneof(fc.integer({ min: -10, max: 10 }), fc.constantFrom(3600, 0, 2 ** 31, Number.MAX_SAFE_INTEGER, -(2 ** 40)));
    const authorization = fc.oneof(
      fc.constant('valid'),
      fc.constant(undefined),
      fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
      fc.string({ maxLength: 40 }),
    );
    const clusterId = fc.oneof(fc.constant(undefined), fc.constantFrom('cluster-a', 'nope', ''), fc.string({ maxLength: 10 }));
    let served = 0;
    await fc.assert(
      fc.asyncProperty(csr, validity, authorization, clusterId, async (csrText, ttl, auth, cluster) => {
        const metadata = new Metadata();
        if (auth === 'valid') metadata.set('authorization', `Bearer ${token()}`);
        else if (auth !== undefined) metadata.set('authorization', auth);
        if (cluster !== undefined) metadata.set('ClusterID', cluster);
        try {
          const chain = await client.createCertificate({ csr: csrText, validity_duration: ttl }, metadata, { deadline: new Date(Date.now() + 10_000) });
          // Served: only for a valid token, and for the caller's identity whatever the CSR asked.
          expect(auth).toBe('valid');
          expect(chain[0]).toContain('-----BEGIN CERTIFICATE-----');
          served++;
        } catch (error) {
          const failure = error as ServiceError;
          expect({ code: failure.code, refusal: REFUSALS.has(failure.code), details: typeof failure.details }).toEqual({
            code: failure.code,
            refusal: true,
            details: 'string',
          });
        }
      }),
      fuzzParameters({ numRuns: 60, longRuns: 3000 }),
    );
    expect(served).toBeGreaterThan(0);
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token()}`);
    expect(await client.createCertificate({ csr: validCsr, validity_duration: 3600 }, metadata)).toHaveLength(2);
  });
});
