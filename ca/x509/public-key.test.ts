import { describe, expect, test } from '@jest/globals';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { importSubjectPublicKeyInfo } from './public-key.js';

const spkiOf = (key: KeyObject): Buffer => key.export({ format: 'der', type: 'spki' });

describe('SubjectPublicKeyInfo import', () => {
  test.each([
    ['P-256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
    ['P-384', () => generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey],
    ['P-521', () => generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey],
    ['RSA', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey],
    ['Ed25519', () => generateKeyPairSync('ed25519').publicKey],
  ])('%s keys come back equal, with the same SubjectPublicKeyInfo', (_name, make) => {
    const original = make();
    const imported = importSubjectPublicKeyInfo(spkiOf(original));
    expect(imported.key.equals(original)).toBe(true);
    expect(imported.subjectPublicKeyInfo.equals(spkiOf(original))).toBe(true);
  });

  test('a compressed EC point takes the DER path', () => {
    const original = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    const jwk = original.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const yOdd = Buffer.from(jwk.y!, 'base64url')[31]! & 1;
    // SEQUENCE { SEQUENCE { ecPublicKey, prime256v1 }, BIT STRING 02|03 || x }
    const prefix = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');
    const compressed = Buffer.concat([prefix, Buffer.from([2 + yOdd]), x]);
    const imported = importSubjectPublicKeyInfo(compressed);
    expect(imported.key.equals(original)).toBe(true);
    expect(createPublicKey({ key: imported.subjectPublicKeyInfo, format: 'der', type: 'spki' }).equals(original)).toBe(true);
  });

  test('a non-minimal RSA modulus is refused', () => {
    const spki = spkiOf(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey);
    // Modulus INTEGER of 129 bytes (leading 00); make the sign byte a redundant extra zero.
    const at = spki.indexOf(Buffer.from([0x02, 0x81, 0x81, 0x00]));
    expect(at).toBeGreaterThan(0);
    const tampered = Buffer.from(spki);
    tampered[at + 4] = 0x00;
    expect(() => importSubjectPublicKeyInfo(tampered)).toThrow();
  });
});
