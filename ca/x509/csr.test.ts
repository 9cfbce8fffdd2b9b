import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPublicKey, generateKeyPairSync, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Pkcs10CertificateRequestGenerator, SubjectAlternativeNameExtension } from '@peculiar/x509';
import { CaError } from '../ca-error.js';
import { buildCsr } from './csr-builder.js';
import { parseAndVerifyCsr } from './csr.js';
import { openssl, removeDir, tempDir } from '../testing/test-support.js';

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof CaError ? err.code : `not a CaError: ${String(err)}`;
  }
}

describe('CSR parsing and verification', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir();
  });

  afterAll(async () => {
    await removeDir(dir);
  });

  const opensslCsr = async (keyArgs: string[], digest = '-sha256'): Promise<{ csr: string; key: string }> => {
    const id = Math.random().toString(36).slice(2);
    const keyFile = join(dir, `${id}.key`);
    const csrFile = join(dir, `${id}.csr`);
    const gen = await openssl(['genpkey', ...keyArgs, '-out', keyFile]);
    expect(gen.ok).toBe(true);
    const req = await openssl([
      'req',
      '-new',
      ...(digest ? [digest] : []),
      '-key',
      keyFile,
      '-subj',
      '/CN=anything',
      '-addext',
      'subjectAltName=URI:spiffe://cluster.local/ns/x/sa/y',
      '-out',
      csrFile,
    ]);
    expect(req.output).toBe('');
    return { csr: await readFile(csrFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  };

  test.each([
    ['ECDSA P-256', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']],
    ['ECDSA P-384', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384']],
    ['RSA 2048', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']],
    ['Ed25519', ['-algorithm', 'ED25519']],
  ])('an openssl %s request verifies and yields its key', async (_name, keyArgs) => {
    const { csr, key } = await opensslCsr(keyArgs, keyArgs.includes('ED25519') ? '' : '-sha256');
    const parsed = parseAndVerifyCsr(csr);
    const expected = createPublicKey(key).export({ format: 'der', type: 'spki' });
    expect(parsed.subjectPublicKeyInfo.equals(expected)).toBe(true);
  });

  test('a @peculiar/x509 request verifies', async () => {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
    const csr = await Pkcs10CertificateRequestGenerator.create({
      name: 'CN=x',
      keys,
      signingAlgorithm: alg,
      extensions: [new SubjectAlternativeNameExtension([{ type: 'url', value: 'spiffe://cluster.local/ns/a/sa/b' }])],
    });
    const parsed = parseAndVerifyCsr(csr.toString('pem'));
    const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey));
    expect(parsed.subjectPublicKeyInfo.equals(spki)).toBe(true);
  });

  test('our own requests verify, with and without names', () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(errorCode(() => parseAndVerifyCsr(buildCsr({ key })))).toBeUndefined();
    expect(errorCode(() => parseAndVerifyCsr(buildCsr({ key, sans: { dnsNames: ['a.b'], ips: ['::1', '127.0.0.1'] } })))).toBeUndefined();
  });

  test('weak keys and weak digests are refused', async () => {
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    expect(errorCode(() => parseAndVerifyCsr(buildCsr({ key: weak })))).toBe('csr-unsupported');
    const { csr } = await opensslCsr(['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'], '-sha1');
    expect(errorCode(() => parseAndVerifyCsr(csr))).toBe('csr-unsupported');
  });

  test.each([
    ['empty text', ''],
    ['not PEM', 'hello'],
    ['a certificate instead of a request', '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n'],
    ['truncated DER', '-----BEGIN CERTIFICATE REQUEST-----\nMIIBAAAA\n-----END CERTIFICATE REQUEST-----\n'],
    ['DER with trailing bytes', '-----BEGIN CERTIFICATE REQUEST-----\nMAAA\n-----END CERTIFICATE REQUEST-----\n'],
  ])('garbage is malformed: %s', (_name, pem) => {
    expect(errorCode(() => parseAndVerifyCsr(pem))).toBe('csr-malformed');
  });

  test('two requests in one text are refused', () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const one = buildCsr({ key });
    expect(errorCode(() => parseAndVerifyCsr(one + one))).toBe('csr-malformed');
  });
});
