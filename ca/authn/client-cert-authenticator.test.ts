import { beforeAll, describe, expect, test } from '@jest/globals';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { Authenticator } from './authenticator.js';
import { parseCertificatesPem } from '../x509/certificate-info.js';
import { newClientCertAuthenticator } from './client-cert-authenticator.js';
import { HOUR, newTestAuthority, type TestAuthority } from '../testing/test-authority.js';
import { newTrustBundleSet, type TrustBundleSet } from '../trust/trust-bundle-set.js';
import { errorMessage } from '../../runtime/index.js';

const OURS = 'spiffe://cluster.local/ns/apps/sa/web';
const FOREIGN = 'spiffe://td1/ns/shop/sa/cart';

describe('client certificate authentication across trust domains', () => {
  const clock = new FakeClock(Date.now());
  let ours: TestAuthority;
  let td1: TestAuthority;
  let td2: TestAuthority;
  let set: TrustBundleSet;
  let federated: Authenticator;
  let local: Authenticator;

  beforeAll(async () => {
    [ours, td1, td2] = await Promise.all([newTestAuthority('cluster.local', clock), newTestAuthority('td1', clock), newTestAuthority('td2', clock)]);
    set = newTrustBundleSet({ trustDomain: 'cluster.local', localRoots: ours.ca });
    set.setFederatedRoots('td1', parseCertificatesPem(td1.rootPem, 'td1'));
    federated = newClientCertAuthenticator({ ca: ours.ca, trustDomain: 'cluster.local', clock, trustBundles: set });
    local = newClientCertAuthenticator({ ca: ours.ca, trustDomain: 'cluster.local', clock });
  });

  const outcome = async (authenticator: Authenticator, der: Buffer): Promise<string> => {
    try {
      const caller = await authenticator.authenticate({ peerCertificates: [der] });
      return caller ? `ok ${caller.identities.join(',')}` : 'none';
    } catch (err) {
      return `refused: ${errorMessage(err)}`;
    }
  };

  test.each([
    ['our workload, our CA', () => ours.workload(OURS).der, `ok ${OURS}`],
    ['a td1 workload, the td1 CA', () => td1.workload(FOREIGN).der, `ok ${FOREIGN}`],
    [
      'our identity signed by the td1 CA',
      () => td1.workload(OURS).der,
      'refused: client certificate of cluster.local: the certificate does not chain to a trusted root',
    ],
    [
      'a td1 identity signed by our CA',
      () => ours.workload(FOREIGN).der,
      'refused: client certificate of td1: the certificate does not chain to a trusted root',
    ],
    ['a td2 workload (not federated)', () => td2.workload('spiffe://td2/ns/a/sa/b').der, 'refused: no trust bundle for trust domain td2'],
    [
      'a certificate without a workload identity',
      () => td1.workload('spiffe://td1/not-a-workload').der,
      'refused: the client certificate must carry exactly one workload SPIFFE identity',
    ],
  ])('with federation: %s', async (_name, der, expected) => {
    expect(await outcome(federated, der())).toBe(expected);
  });

  test('without federation only our domain is accepted', async () => {
    expect(await outcome(local, ours.workload(OURS).der)).toBe(`ok ${OURS}`);
    expect(await outcome(local, td1.workload(FOREIGN).der)).toMatch(
      /^refused: the client certificate must carry exactly one SPIFFE identity of the trust domain/,
    );
  });

  test('an expired certificate and a CA certificate are refused', async () => {
    const shortLived = td1.workload(FOREIGN, 60_000).der;
    expect(await outcome(federated, shortLived)).toBe(`ok ${FOREIGN}`);
    clock.advance(2 * 60_000);
    expect(await outcome(federated, shortLived)).toBe('refused: client certificate of td1: a certificate of the chain is not valid now');
    expect(await outcome(federated, parseCertificatesPem(td1.rootPem, 'td1')[0]!.der)).toBe('refused: the client certificate is a CA certificate');
  });

  test('a new td1 root replaces the old one: certificates of the old root stop verifying', async () => {
    const before = td1.workload(FOREIGN, 10 * HOUR).der;
    const successor = await newTestAuthority('td1', clock);
    set.setFederatedRoots('td1', parseCertificatesPem(successor.rootPem, 'td1'));
    expect(await outcome(federated, successor.workload(FOREIGN).der)).toBe(`ok ${FOREIGN}`);
    expect(await outcome(federated, before)).toMatch(/does not chain to a trusted root/);
  });

  test('with external signing (no CA) our roots come from the set alone', async () => {
    const signerSet = newTrustBundleSet({ trustDomain: 'cluster.local', localRoots: td2.ca });
    const authenticator = newClientCertAuthenticator({ trustDomain: 'cluster.local', clock, trustBundles: signerSet });
    expect(await outcome(authenticator, td2.workload(OURS).der)).toBe(`ok ${OURS}`);
    expect(await outcome(authenticator, ours.workload(OURS).der)).toMatch(/does not chain to a trusted root/);
    expect(() => newClientCertAuthenticator({ trustDomain: 'cluster.local', clock })).toThrow(/needs the CA or a trust bundle set/);
  });
});
