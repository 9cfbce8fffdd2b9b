/**
 * CAs for the federation and external-signing tests: one per trust domain, issuing workload
 * and loopback serving certificates. Not exported from index.ts.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { newRealClock, type Clock } from '../../runtime/index.js';
import { newCertificateAuthority, type CertificateAuthority } from '../authority/certificate-authority.js';
import { buildCsr } from '../x509/csr-builder.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { decodePemBlocks } from '../../pki/index.js';
import { newSelfSignedMaterial } from '../authority/self-signed-root.js';

export const HOUR = 3_600_000;

export interface TestAuthority {
  readonly ca: CertificateAuthority;
  readonly rootPem: string;
  /** A key and a certificate (PEM, and DER for AuthContext) carrying `identity` alone. */
  workload(identity: string, ttlMs?: number): { key: KeyObject; certPem: string; der: Buffer };
  /** A serving certificate for `localhost` and 127.0.0.1, with its key, PEM. */
  loopbackServer(): { keyPem: string; certPem: string };
}

export async function newTestAuthority(trustDomain: string, clock: Clock = newRealClock()): Promise<TestAuthority> {
  const material = await newSelfSignedMaterial({ keyType: 'ecdsa-p256', rsaKeySize: 2048, trustDomain, ttlMs: 100 * HOUR, nowMs: clock.now() });
  const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: HOUR, maxTtlMs: 10 * HOUR });
  const newKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  return {
    ca,
    rootPem: ca.rootBundlePem(),
    workload: (identity, ttlMs = HOUR) => {
      const key = newKey();
      const issued = ca.signCsr(buildCsr({ key }), identity, ttlMs);
      return { key, certPem: issued.certPem, der: decodePemBlocks(issued.certPem)[0]!.der };
    },
    loopbackServer: () => {
      const key = newKey();
      const issued = ca.issue({
        subjectPublicKeyInfo: createPublicKey(key).export({ format: 'der', type: 'spki' }),
        sans: { dnsNames: ['localhost'], ips: ['127.0.0.1'] },
        ttlMs: HOUR,
      });
      return { keyPem: key.export({ format: 'pem', type: 'pkcs8' }).toString(), certPem: issued.certPem };
    },
  };
}
