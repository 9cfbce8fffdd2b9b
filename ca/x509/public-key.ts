import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { DerError, TAG, decodeBitStringBytes, decodeOid, derChildren, derContent, derReadWhole, expectTag, type DerElement } from './der.js';

const EC_CURVES: ReadonlyMap<string, { crv: string; size: number }> = new Map([
  ['1.2.840.10045.3.1.7', { crv: 'P-256', size: 32 }],
  ['1.3.132.0.34', { crv: 'P-384', size: 48 }],
  ['1.3.132.0.35', { crv: 'P-521', size: 66 }],
]);

/** A verified-ready public key and the SubjectPublicKeyInfo a certificate should carry for it. */
export interface ImportedPublicKey {
  readonly key: KeyObject;
  /** The input when it has the one canonical shape of its key type; otherwise re-encoded by OpenSSL. */
  readonly subjectPublicKeyInfo: Buffer;
}

/**
 * A public key from SubjectPublicKeyInfo DER. OpenSSL 3 decodes and encodes DER keys through
 * its generic decoder and encoder framework, which costs more than the signature check itself;
 * EC (named curve, uncompressed point) and RSA keys are rebuilt as JWKs instead, with the same
 * validation, and their strictly-shaped input is kept as is. Other keys take the DER path.
 */
export function importSubjectPublicKeyInfo(spki: Buffer): ImportedPublicKey {
  const jwk = jwkOf(spki);
  if (jwk) return { key: createPublicKey({ key: jwk, format: 'jwk' }), subjectPublicKeyInfo: spki };
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  return { key, subjectPublicKeyInfo: key.export({ format: 'der', type: 'spki' }) };
}

function jwkOf(spki: Buffer): JsonWebKey | undefined {
  const outer = derReadWhole(spki, TAG.sequence);
  const [algorithm, bits] = derChildren(spki, outer);
  const [oid, params, extra] = derChildren(spki, expectTag(algorithm, TAG.sequence, 'algorithm'));
  if (extra !== undefined) return undefined;
  const key = decodeBitStringBytes(spki, expectTag(bits, TAG.bitString, 'subjectPublicKey'));
  switch (decodeOid(spki, expectTag(oid, TAG.oid, 'algorithm'))) {
    case '1.2.840.10045.2.1': {
      const curve = params?.tag === TAG.oid ? EC_CURVES.get(decodeOid(spki, params)) : undefined;
      if (!curve || key.length !== 1 + 2 * curve.size || key[0] !== 0x04) return undefined;
      return {
        kty: 'EC',
        crv: curve.crv,
        x: key.subarray(1, 1 + curve.size).toString('base64url'),
        y: key.subarray(1 + curve.size).toString('base64url'),
      };
    }
    case '1.2.840.113549.1.1.1': {
      if (params?.tag !== TAG.null || params.end !== params.start) return undefined;
      const rsa = derReadWhole(key, TAG.sequence);
      const [n, e, extra] = derChildren(key, rsa);
      if (extra !== undefined) return undefined;
      return { kty: 'RSA', n: unsigned(key, expectTag(n, TAG.integer, 'modulus')), e: unsigned(key, expectTag(e, TAG.integer, 'exponent')) };
    }
    default:
      return undefined;
  }
}

/** A positive, minimally encoded INTEGER as base64url; anything else is not the canonical shape. */
function unsigned(buf: Buffer, el: DerElement): string {
  const bytes = derContent(buf, el);
  const first = bytes[0] ?? 0x80;
  if (first & 0x80) throw new DerError('negative or empty RSA integer');
  if (first === 0 && (bytes.length === 1 || ((bytes[1] ?? 0) & 0x80) === 0)) throw new DerError('non-minimal RSA integer');
  return (first === 0 ? bytes.subarray(1) : bytes).toString('base64url');
}
