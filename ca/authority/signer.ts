import { sign as cryptoSign, type KeyObject } from 'node:crypto';
import { CaError } from '../ca-error.js';
import { derNull, derOid, derSequence } from '../x509/der.js';

/** The key types a CA key may have. */
export type CaKeyType = 'rsa' | 'ecdsa-p256';

/**
 * A CA private key parsed once, with the signature algorithm its certificates carry. `sign`
 * is the hot path: one synchronous node:crypto call on a ready KeyObject.
 */
export interface CaSigner {
  readonly key: KeyObject;
  /** The DER AlgorithmIdentifier written in `signature` and `signatureAlgorithm`. */
  readonly algorithmIdentifier: Buffer;
  sign(tbs: Buffer): Buffer;
}

export function newCaSigner(key: KeyObject): CaSigner {
  if (key.type !== 'private') throw new CaError('ca-material-invalid', 'the CA key is not a private key');
  const { hash, algorithmIdentifier } = signatureAlgorithmFor(key);
  return {
    key,
    algorithmIdentifier,
    sign: (tbs) => cryptoSign(hash, tbs, key),
  };
}

function signatureAlgorithmFor(key: KeyObject): { hash: string | null; algorithmIdentifier: Buffer } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { hash: 'sha256', algorithmIdentifier: derSequence(derOid('1.2.840.113549.1.1.11'), derNull()) };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'prime256v1') return { hash: 'sha256', algorithmIdentifier: derSequence(derOid('1.2.840.10045.4.3.2')) };
      if (curve === 'secp384r1') return { hash: 'sha384', algorithmIdentifier: derSequence(derOid('1.2.840.10045.4.3.3')) };
      if (curve === 'secp521r1') return { hash: 'sha512', algorithmIdentifier: derSequence(derOid('1.2.840.10045.4.3.4')) };
      throw new CaError('ca-material-invalid', `unsupported CA key curve ${String(curve)}`);
    }
    case 'ed25519':
      return { hash: null, algorithmIdentifier: derSequence(derOid('1.3.101.112')) };
    default:
      throw new CaError('ca-material-invalid', `unsupported CA key type ${String(key.asymmetricKeyType)}`);
  }
}
