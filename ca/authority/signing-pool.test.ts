import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Metadata, credentials, type ServiceError } from '@grpc/grpc-js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { waitFor } from '../../testing/wait-for.js';
import { daemonSettings } from '../testing/test-support.js';
import type * as Ca from '../index.js';
import type * as Runtime from '../../runtime/index.js';
import type * as CaSettings from '../ca-settings.js';

// The signing threads need the compiled worker script: the pool and the CA are taken from the
// build (`npm run build`), as the daemon runs them. Uncompiled, the same pool signs on the calling thread.
async function fromBuild<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(PROJECT_ROOT, 'dist', path)).href)) as T;
}

const HOUR = 3_600_000;
const WEB = 'spiffe://cluster.local/ns/apps/sa/web';

let ca: typeof Ca;
let runtime: typeof Runtime;
let caSettings: typeof CaSettings;

beforeAll(async () => {
  ca = await fromBuild<typeof Ca>('ca/index.js');
  runtime = await fromBuild<typeof Runtime>('runtime/index.js');
  caSettings = await fromBuild<typeof CaSettings>('ca/ca-settings.js');
});

async function newAuthority(clock: Runtime.Clock): Promise<Ca.CertificateAuthority> {
  const material = await ca.newSelfSignedMaterial({
    keyType: 'ecdsa-p256',
    rsaKeySize: 2048,
    trustDomain: 'cluster.local',
    ttlMs: 1000 * HOUR,
    nowMs: clock.now(),
  });
  return ca.newCertificateAuthority({ bundle: ca.loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 90 * 24 * HOUR });
}

function newKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

function spkiOf(key: KeyObject): Buffer {
  return createPublicKey(key).export({ format: 'der', type: 'spki' });
}

/** A started pool whose thread is up: the next CSRs go to it. */
async function warmPool(authority: Ca.CertificateAuthority, clock: Runtime.Clock): Promise<Ca.SigningPool> {
  const pool = ca.newSigningPool({ ca: authority, threads: 2, startAfter: 1, clock });
  const before = pool.jobsOnThreads();
  await waitFor(
    async () => {
      await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
      return pool.jobsOnThreads() > before;
    },
    { description: 'a CSR signed on the signing thread', timeoutMs: 10_000 },
  );
  return pool;
}

async function refusal(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a refusal');
}

describe('the signing pool', () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 25, 12, 0, 0, 250));
  let authority: Ca.CertificateAuthority;
  let pool: Ca.SigningPool;

  beforeAll(async () => {
    authority = await newAuthority(clock);
    pool = await warmPool(authority, clock);
  });

  afterAll(async () => {
    await pool.close();
  });

  test("a thread signs each CSR for its own key, with the identity alone, at the calling thread's time and lifetime", async () => {
    const keys = Array.from({ length: 48 }, newKey);
    const identities = keys.map((_, i) => `spiffe://cluster.local/ns/apps/sa/account-${i}`);
    const before = pool.jobsOnThreads();
    // Many at once: the answers come back out of order with the calling thread's, and must not be swapped.
    const issued = await Promise.all(
      keys.map((key, i) => pool.signCsr(ca.buildCsr({ key, sans: { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'] } }), identities[i]!, 2 * HOUR)),
    );
    expect(pool.jobsOnThreads() - before).toBeGreaterThan(0);
    const root = new X509Certificate(authority.rootBundlePem());
    issued.forEach((result, i) => {
      const leaf = new X509Certificate(result.certPem);
      expect(leaf.publicKey.export({ format: 'der', type: 'spki' }).equals(spkiOf(keys[i]!))).toBe(true);
      expect(leaf.subjectAltName).toBe(`URI:${identities[i]}`);
      expect(leaf.verify(root.publicKey)).toBe(true);
      expect(Date.parse(leaf.validFrom)).toBe(Date.UTC(2026, 10, 25, 12, 0, 0));
      expect(Date.parse(leaf.validTo)).toBe(Date.UTC(2026, 10, 25, 14, 0, 0));
      expect(result.notAfterMs).toBe(Date.UTC(2026, 10, 25, 14, 0, 0));
      expect(result.certChainPem).toEqual([result.certPem, authority.rootBundlePem()]);
    });
  });

  test('a forged or broken CSR is refused by the thread with the error the CA gives; a lifetime over the maximum before it is sent', async () => {
    // The CSR of one key with another key put in its place: the self-signature no longer verifies.
    const der = Buffer.from(ca.buildCsr({ key: newKey() }).replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    const victim = spkiOf(newKey());
    // A P-256 SubjectPublicKeyInfo: SEQUENCE (89 bytes) { SEQUENCE (19 bytes) { the algorithm }, the point }.
    const own = der.indexOf(Buffer.from([0x30, 0x59, 0x30, 0x13]));
    expect(own).toBeGreaterThan(0);
    const forged = Buffer.concat([der.subarray(0, own), victim, der.subarray(own + victim.length)]);
    const before = pool.jobsOnThreads();
    const results = await Promise.all([
      refusal(pool.signCsr(ca.encodePem('CERTIFICATE REQUEST', forged), WEB, 0)),
      refusal(pool.signCsr('-----BEGIN CERTIFICATE REQUEST-----\nMIIBAA==\n-----END CERTIFICATE REQUEST-----\n', WEB, 0)),
      refusal(pool.signCsr('not a CSR', WEB, 0)),
    ]);
    expect(pool.jobsOnThreads() - before).toBeGreaterThan(0);
    expect(results.map((error) => error.code)).toEqual(['csr-signature', 'csr-malformed', 'csr-malformed']);
    expect(results.every((error) => error instanceof ca.CaError)).toBe(true);

    const onThreads = pool.jobsOnThreads();
    const tooLong = await refusal(pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 91 * 24 * HOUR));
    expect(tooLong.code).toBe('ttl-too-long');
    expect(pool.jobsOnThreads()).toBe(onThreads);
  });

  test('after a root rotation the threads sign with the new material', async () => {
    const rotated = await ca.newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 1000 * HOUR,
      nowMs: clock.now(),
    });
    const oldRoot = new X509Certificate(authority.rootBundlePem());
    authority.setBundle(ca.loadKeyCertBundle(rotated));
    const newRoot = new X509Certificate(authority.rootBundlePem());
    const before = pool.jobsOnThreads();
    const issued = await Promise.all(Array.from({ length: 8 }, () => pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0)));
    expect(pool.jobsOnThreads() - before).toBeGreaterThan(0);
    for (const result of issued) {
      const leaf = new X509Certificate(result.certPem);
      expect(leaf.verify(newRoot.publicKey)).toBe(true);
      expect(leaf.verify(oldRoot.publicKey)).toBe(false);
      expect(result.certChainPem.at(-1)).toBe(authority.rootBundlePem());
    }
  });
});

describe("the signing threads' lifecycle", () => {
  test('they start when CSRs come in numbers, end when idle, and the calling thread signs meanwhile', async () => {
    const clock = new FakeClock();
    const authority = await newAuthority(clock);
    const pool = ca.newSigningPool({ ca: authority, threads: 2, startAfter: 4, idleMs: 30_000, clock });
    try {
      for (let i = 0; i < 3; i++) await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
      expect(pool.threads()).toBe(0);
      // The fourth within the second starts the thread; a second later the count starts again.
      clock.advance(1000);
      for (let i = 0; i < 3; i++) await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
      expect(pool.threads()).toBe(0);
      await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
      expect(pool.threads()).toBe(1);
      await waitFor(
        async () => {
          await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
          return pool.jobsOnThreads() > 0;
        },
        { description: 'a CSR on the thread', timeoutMs: 10_000 },
      );
      clock.advance(30_000);
      expect(pool.threads()).toBe(0);
      const issued = await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
      expect(new X509Certificate(issued.certPem).verify(new X509Certificate(authority.rootBundlePem()).publicKey)).toBe(true);
    } finally {
      await pool.close();
    }
  });

  test('CSRs a thread holds when the pool closes are signed on the calling thread: none is lost', async () => {
    const clock = new FakeClock();
    const authority = await newAuthority(clock);
    const pool = await warmPool(authority, clock);
    const keys = Array.from({ length: 12 }, newKey);
    const pending = keys.map((key) => pool.signCsr(ca.buildCsr({ key }), WEB, 0));
    await pool.close();
    const issued = await Promise.all(pending);
    issued.forEach((result, i) =>
      expect(new X509Certificate(result.certPem).publicKey.export({ format: 'der', type: 'spki' }).equals(spkiOf(keys[i]!))).toBe(true),
    );
    expect(pool.threads()).toBe(0);
  });

  test('one thread in all signs on the calling thread alone', async () => {
    const clock = new FakeClock();
    const pool = ca.newSigningPool({ ca: await newAuthority(clock), threads: 1, startAfter: 1, clock });
    for (let i = 0; i < 4; i++) await pool.signCsr(ca.buildCsr({ key: newKey() }), WEB, 0);
    expect(pool.threads()).toBe(0);
    expect(pool.jobsOnThreads()).toBe(0);
    await pool.close();
  });
});

describe('the CA over gRPC with its signing threads', () => {
  test('concurrent callers each get a chain for their own key, signed on the thread', async () => {
    const clock = runtime.newRealClock();
    const authority = await newAuthority(clock);
    const pool = await warmPool(authority, clock);
    const caller = {
      name: 'test',
      authenticate: async (context: Ca.AuthContext) => (context.bearerToken === 'web' ? { identities: [WEB], authenticator: 'test' } : undefined),
    };
    const server = ca.newCaServer({
      serving: caSettings.daemonServingFromSettings(daemonSettings()),
      ca: authority,
      signer: pool,
      authenticators: [caller],
      metrics: runtime.newMetrics('pilot-discovery'),
      log: runtime.newNopLogger('serverca'),
      host: '127.0.0.1',
      port: 0,
      clock,
    });
    const abort = new AbortController();
    const running = server.start(abort.signal);
    const client = await (async () => {
      await server.waitForReady!(abort.signal);
      return ca.newMeshCertificateClient(`localhost:${server.port()}`, credentials.createSsl(Buffer.from(authority.rootBundlePem())));
    })();
    try {
      const metadata = new Metadata();
      metadata.set('authorization', 'Bearer web');
      const keys = Array.from({ length: 32 }, newKey);
      const before = pool.jobsOnThreads();
      const chains = await Promise.all(keys.map((key) => client.createCertificate({ csr: ca.buildCsr({ key }), validity_duration: 3600 }, metadata)));
      expect(pool.jobsOnThreads() - before).toBeGreaterThan(0);
      const root = new X509Certificate(authority.rootBundlePem());
      chains.forEach((chain, i) => {
        const leaf = new X509Certificate(chain[0]!);
        expect(leaf.publicKey.export({ format: 'der', type: 'spki' }).equals(spkiOf(keys[i]!))).toBe(true);
        expect(leaf.subjectAltName).toBe(`URI:${WEB}`);
        expect(leaf.verify(root.publicKey)).toBe(true);
      });
      // An attacker's CSR through the same path: refused with the caller's fault, not signed.
      const der = Buffer.from(ca.buildCsr({ key: newKey() }).replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
      der[der.length - 1] = (der[der.length - 1] as number) ^ 0x01;
      const refused = await client.createCertificate({ csr: ca.encodePem('CERTIFICATE REQUEST', der), validity_duration: 3600 }, metadata).then(
        () => undefined,
        (error: ServiceError) => error,
      );
      expect(refused?.details).toMatch(/signature/);
    } finally {
      client.close();
      abort.abort();
      await running;
      await pool.close();
    }
  });
});
