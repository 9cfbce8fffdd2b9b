import { beforeAll, describe, expect, test } from '@jest/globals';
import { newRealClock } from '../../runtime/index.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { parseCertificatesPem } from '../x509/certificate-info.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { rotateSelfSignedMaterial } from '../authority/self-signed-root.js';
import { HOUR, newTestAuthority, type TestAuthority } from '../testing/test-authority.js';
import { newTrustBundleSet, type TrustBundleSnapshot } from './trust-bundle-set.js';

describe('the trust bundle set', () => {
  const clock = newRealClock();
  let ours: TestAuthority;
  let td1: TestAuthority;
  let td2: TestAuthority;

  beforeAll(async () => {
    [ours, td1, td2] = await Promise.all([newTestAuthority('cluster.local'), newTestAuthority('td1'), newTestAuthority('td2')]);
  });

  test('holds our roots and each federated domain’s roots apart, and notifies on change only', () => {
    const set = newTrustBundleSet({ trustDomain: 'cluster.local', localRoots: ours.ca });
    const seen: TrustBundleSnapshot[] = [];
    set.onChange((snapshot) => seen.push(snapshot));
    expect(set.trustDomains()).toEqual(['cluster.local']);
    expect(set.rootsFor('td1')).toEqual([]);

    const td2Roots = parseCertificatesPem(td2.rootPem, 'td2');
    const td1Roots = parseCertificatesPem(td1.rootPem, 'td1');
    expect(set.setFederatedRoots('td2', td2Roots)).toBe(true);
    expect(set.setFederatedRoots('td1', td1Roots)).toBe(true);
    expect(set.setFederatedRoots('td1', parseCertificatesPem(td1.rootPem, 'td1'))).toBe(false);
    expect(seen).toHaveLength(2);
    expect([...seen[1]!.entries()]).toEqual([
      ['cluster.local', ours.rootPem],
      ['td1', td1.rootPem],
      ['td2', td2.rootPem],
    ]);
    expect(set.rootsFor('td1').map((r) => r.pem)).toEqual([td1.rootPem]);
    expect(set.rootsFor('cluster.local').map((r) => r.pem)).toEqual([ours.rootPem]);
    expect(set.allRootsPem()).toBe(ours.rootPem + td1.rootPem + td2.rootPem);

    // Roots fetched for our own domain are trusted beside the CA's, once each.
    set.setFederatedRoots('cluster.local', [...td2Roots, ...parseCertificatesPem(ours.rootPem, 'ours')]);
    expect(set.rootsFor('cluster.local').map((r) => r.pem)).toEqual([ours.rootPem, td2.rootPem]);
    expect(set.allRootsPem()).toBe(ours.rootPem + td2.rootPem + td1.rootPem);

    expect(set.removeFederatedRoots('td2')).toBe(true);
    expect(set.removeFederatedRoots('td2')).toBe(false);
    expect(set.trustDomains()).toEqual(['cluster.local', 'td1']);
    expect(seen).toHaveLength(4);
    expect(() => set.setFederatedRoots('td3', [])).toThrow(/at least one root/);
  });

  test('our roots follow the CA through a root rotation; a failing listener is logged, not fatal', () => {
    const entries: LogEntry[] = [];
    const set = newTrustBundleSet({ trustDomain: 'cluster.local', localRoots: ours.ca, log: newRecordingLogger(entries, {}, 'trustBundle') });
    const seen: string[] = [];
    set.onChange(() => {
      throw new Error('listener broke');
    });
    const unsubscribe = set.onChange((snapshot) => seen.push(snapshot.get('cluster.local')!));
    const rotated = loadKeyCertBundle(
      rotateSelfSignedMaterial(ours.ca.bundle().material, { trustDomain: 'cluster.local', ttlMs: 200 * HOUR, nowMs: clock.now() }),
    );
    ours.ca.setBundle(rotated);
    expect(seen).toEqual([rotated.rootBundlePem]);
    expect(set.rootsFor('cluster.local')).toHaveLength(2);
    expect(entries.find((e) => e.message === 'trust bundle listener failed')?.fields).toEqual({ error: 'listener broke' });

    unsubscribe();
    set.close();
    const before = set.snapshot();
    ours.ca.setBundle(loadKeyCertBundle(rotateSelfSignedMaterial(rotated.material, { trustDomain: 'cluster.local', ttlMs: 300 * HOUR, nowMs: clock.now() })));
    expect(seen).toHaveLength(1);
    expect(set.snapshot()).toBe(before);
  });
});
