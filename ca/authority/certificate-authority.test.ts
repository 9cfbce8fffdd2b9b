import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { newMetrics } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { CaError } from '../ca-error.js';
import { newCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { buildCsr } from '../x509/csr-builder.js';
import { loadKeyCertBundle } from './key-cert-bundle.js';
import { decodePemBlocks, encodePem } from '../../pki/index.js';
import { newSelfSignedMaterial } from './self-signed-root.js';
import { opensslText, opensslVerify, removeDir, tempDir } from '../testing/test-support.js';

const HOUR = 3_600_000;
const WEB = 'spiffe://cluster.local/ns/apps/sa/web';

describe('certificate authority: signing', () => {
  const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
  const metrics = newMetrics('pilot-discovery');
  let dir: string;
  let ca: CertificateAuthority;
  let workloadKey: KeyObject;

  beforeAll(async () => {
    dir = await tempDir();
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 87600 * HOUR,
      nowMs: clock.now(),
    });
    ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
    workloadKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  });

  afterAll(async () => {
    await removeDir(dir);
  });

  test('an issued chain verifies with openssl against the root', async () => {
    const issued = ca.signCsr(buildCsr({ key: workloadKey }), WEB, HOUR);
    expect(issued.certChainPem).toHaveLength(2);
    expect(issued.certChainPem[0]).toBe(issued.certPem);
    expect(issued.certChainPem[1]).toBe(ca.rootBundlePem());
    const result = await opensslVerify(dir, { roots: ca.rootBundlePem(), leaf: issued.certPem, atMs: clock.now() });
    expect(result).toEqual({ ok: true, output: expect.stringContaining('OK') });
  });

  test('the certificate carries exactly the caller identity, never the names the CSR asks for', async () => {
    const csr = buildCsr({
      key: workloadKey,
      commonName: 'admin',
      sans: { uris: ['spiffe://cluster.local/ns/kube-system/sa/admin'], dnsNames: ['evil.example.com'], ips: ['10.0.0.1'] },
    });
    const issued = ca.signCsr(csr, WEB, HOUR);
    const cert = new X509Certificate(issued.certPem);
    expect(cert.subjectAltName).toBe(`URI:${WEB}`);
    expect(cert.subject ?? '').toBe('');
    const text = await opensslText(dir, issued.certPem);
    expect(text).toMatch(/X509v3 Subject Alternative Name: critical\s+URI:spiffe:\/\/cluster.local\/ns\/apps\/sa\/web\s*\n/);
    expect(text).not.toContain('admin');
    expect(text).not.toContain('evil.example.com');
  });

  test('key usages, extended key usages, not a CA, key identifiers', async () => {
    const issued = ca.signCsr(buildCsr({ key: workloadKey }), WEB, HOUR);
    const text = await opensslText(dir, issued.certPem);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment\s*\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication\s*\n/);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    const ski = /X509v3 Subject Key Identifier:\s+([0-9A-F:]+)/.exec(text)?.[1];
    const aki = /X509v3 Authority Key Identifier:\s+(?:keyid:)?([0-9A-F:]+)/.exec(text)?.[1];
    const rootText = await opensslText(dir, ca.rootBundlePem());
    const rootSki = /X509v3 Subject Key Identifier:\s+([0-9A-F:]+)/.exec(rootText)?.[1];
    expect(ski).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(aki).toBe(rootSki);
    expect(rootText).toMatch(/CA:TRUE/);
    expect(rootText).toContain('Subject: O = cluster.local');
    const leaf = new X509Certificate(issued.certPem);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(new X509Certificate(ca.rootBundlePem()))).toBe(true);
    const spki = (k: KeyObject): Buffer => (k.type === 'public' ? k : createPublicKey(k)).export({ format: 'der', type: 'spki' });
    expect(spki(leaf.publicKey).equals(spki(workloadKey))).toBe(true);
  });

  test.each([
    ['zero gets the default TTL', 0, 24 * HOUR],
    ['negative gets the default TTL', -5000, 24 * HOUR],
    ['one hour', HOUR, HOUR],
    ['exactly the maximum', 2160 * HOUR, 2160 * HOUR],
  ])('TTL: %s', (_name, requested, expected) => {
    const issued = ca.signCsr(buildCsr({ key: workloadKey }), WEB, requested);
    const cert = new X509Certificate(issued.certPem);
    expect(Date.parse(cert.validFrom)).toBe(clock.now());
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(expected);
    expect(issued.notAfterMs).toBe(clock.now() + expected);
  });

  test('a TTL above the maximum is refused', () => {
    expect(() => ca.signCsr(buildCsr({ key: workloadKey }), WEB, 2160 * HOUR + 1000)).toThrow(expect.objectContaining({ code: 'ttl-too-long' }));
  });

  test('certificates never outlive the CA', async () => {
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 10 * HOUR,
      nowMs: clock.now(),
    });
    const shortCa = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR });
    const issued = shortCa.signCsr(buildCsr({ key: workloadKey }), WEB, 0);
    expect(issued.notAfterMs).toBe(clock.now() + 10 * HOUR);
  });

  test('garbage and tampered CSRs are refused', () => {
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
        return undefined;
      } catch (err) {
        return err instanceof CaError ? err.code : `not a CaError: ${String(err)}`;
      }
    };
    expect(code(() => ca.signCsr('hello', WEB, HOUR))).toBe('csr-malformed');
    expect(code(() => ca.signCsr(encodePem('CERTIFICATE REQUEST', Buffer.from('garbage garbage')), WEB, HOUR))).toBe('csr-malformed');
    const csr = buildCsr({ key: workloadKey, commonName: 'aaaa' });
    const der = decodePemBlocks(csr)[0]!.der;
    const badSignature = Buffer.from(der);
    badSignature[badSignature.length - 5]! ^= 0x01; // inside the signature value
    expect(code(() => ca.signCsr(encodePem('CERTIFICATE REQUEST', badSignature), WEB, HOUR))).toBe('csr-signature');
    const badContent = Buffer.from(der);
    badContent[der.indexOf('aaaa')] = 'b'.charCodeAt(0); // the signed subject, changed after signing
    expect(code(() => ca.signCsr(encodePem('CERTIFICATE REQUEST', badContent), WEB, HOUR))).toBe('csr-signature');
    expect(code(() => ca.signCsr(csr, WEB, HOUR))).toBeUndefined();
  });

  test('the expiry gauges hold the root expiry in unix seconds', async () => {
    const root = new X509Certificate(ca.rootBundlePem());
    const expected = Math.floor(Date.parse(root.validTo) / 1000);
    expect((await metrics.gauge('ca_server_root_cert_expiry_timestamp').get()).values[0]?.value).toBe(expected);
    expect((await metrics.gauge('ca_server_cert_chain_expiry_timestamp').get()).values[0]?.value).toBe(expected);
  });
});

describe('certificate authority: RSA root', () => {
  test('an RSA-2048 self-signed CA issues chains that openssl verifies', async () => {
    const dir = await tempDir();
    try {
      const clock = new FakeClock(Date.now());
      const material = await newSelfSignedMaterial({ keyType: 'rsa', rsaKeySize: 2048, trustDomain: 'cluster.local', ttlMs: 87600 * HOUR, nowMs: clock.now() });
      const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR });
      const key = generateKeyPairSync('ed25519').privateKey;
      const issued = ca.signCsr(buildCsr({ key }), WEB, 0);
      expect(await opensslVerify(dir, { roots: ca.rootBundlePem(), leaf: issued.certPem })).toMatchObject({ ok: true });
      expect(await opensslText(dir, ca.rootBundlePem())).toMatch(/Public-Key: \(2048 bit\)[\s\S]*Signature Algorithm: sha256WithRSAEncryption/);
    } finally {
      await removeDir(dir);
    }
  });
});
