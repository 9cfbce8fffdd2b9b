import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { CaError } from '../ca-error.js';
import { DerError, TAG, decodeBitStringBytes, decodeOid, derChildren, derRaw, derReadWhole, expectTag } from './der.js';
import { decodePemBlocks } from '../../pki/index.js';
import { importSubjectPublicKeyInfo } from './public-key.js';

/** What signing needs from a PKCS#10 request whose signature verified: the key, nothing else. */
export interface VerifiedCsr {
  readonly subjectPublicKeyInfo: Buffer;
  readonly publicKey: KeyObject;
}

/** CSR signature algorithms we accept, by OID: the hash and the key type they go with. */
const SIGNATURE_ALGORITHMS: ReadonlyMap<string, { hash: string | null; keyType: string }> = new Map([
  ['1.2.840.10045.4.3.2', { hash: 'sha256', keyType: 'ec' }],
  ['1.2.840.10045.4.3.3', { hash: 'sha384', keyType: 'ec' }],
  ['1.2.840.10045.4.3.4', { hash: 'sha512', keyType: 'ec' }],
  ['1.2.840.113549.1.1.11', { hash: 'sha256', keyType: 'rsa' }],
  ['1.2.840.113549.1.1.12', { hash: 'sha384', keyType: 'rsa' }],
  ['1.2.840.113549.1.1.13', { hash: 'sha512', keyType: 'rsa' }],
  ['1.3.101.112', { hash: null, keyType: 'ed25519' }],
]);

const MIN_RSA_BITS = 2048;

/**
 * Parses a PEM PKCS#10 request and verifies its self-signature. Only the public key is kept:
 * the subject and requested names are ignored, since the CA decides the identity.
 */
export function parseAndVerifyCsr(pem: string): VerifiedCsr {
  const blocks = decodePemBlocks(pem).filter((b) => b.label === 'CERTIFICATE REQUEST' || b.label === 'NEW CERTIFICATE REQUEST');
  if (blocks.length !== 1) throw new CaError('csr-malformed', `expected one PEM certificate request, found ${blocks.length}`);
  return verifyCsrDer(blocks[0]!.der);
}

export function verifyCsrDer(der: Buffer): VerifiedCsr {
  let info: Buffer;
  let spki: Buffer;
  let algorithm: string;
  let signature: Buffer;
  try {
    const request = derReadWhole(der, TAG.sequence);
    const [infoEl, algEl, sigEl] = derChildren(der, request);
    const infoFields = derChildren(der, expectTag(infoEl, TAG.sequence, 'certificationRequestInfo'));
    expectTag(infoFields[0], TAG.integer, 'version');
    expectTag(infoFields[1], TAG.sequence, 'subject');
    spki = derRaw(der, expectTag(infoFields[2], TAG.sequence, 'subjectPKInfo'));
    info = derRaw(der, infoEl!);
    algorithm = decodeOid(der, expectTag(derChildren(der, expectTag(algEl, TAG.sequence, 'signatureAlgorithm'))[0], TAG.oid, 'algorithm'));
    signature = decodeBitStringBytes(der, expectTag(sigEl, TAG.bitString, 'signature'));
  } catch (err) {
    if (err instanceof DerError) throw new CaError('csr-malformed', `malformed certificate request: ${err.message}`, { cause: err });
    throw err;
  }
  const alg = SIGNATURE_ALGORITHMS.get(algorithm);
  if (!alg) throw new CaError('csr-unsupported', `unsupported CSR signature algorithm ${algorithm}`);
  let publicKey: KeyObject;
  let certificateSpki: Buffer;
  try {
    ({ key: publicKey, subjectPublicKeyInfo: certificateSpki } = importSubjectPublicKeyInfo(spki));
  } catch (err) {
    throw new CaError('csr-malformed', 'the certificate request carries an unreadable public key', { cause: err });
  }
  if (publicKey.asymmetricKeyType !== alg.keyType) {
    throw new CaError('csr-signature', `signature algorithm ${algorithm} does not match a ${String(publicKey.asymmetricKeyType)} key`);
  }
  if (alg.keyType === 'rsa' && (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
    throw new CaError('csr-unsupported', `RSA keys need at least ${MIN_RSA_BITS} bits`);
  }
  let valid: boolean;
  try {
    valid = cryptoVerify(alg.hash, info, publicKey, signature);
  } catch (err) {
    throw new CaError('csr-signature', 'the certificate request signature does not verify', { cause: err });
  }
  if (!valid) throw new CaError('csr-signature', 'the certificate request signature does not verify');
  return { subjectPublicKeyInfo: certificateSpki, publicKey };
}
