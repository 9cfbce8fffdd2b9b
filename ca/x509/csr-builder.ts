import { createPublicKey, type KeyObject } from 'node:crypto';
import { NAME_OID, buildName, subjectAltNameExtension, type SubjectAltNames } from '../authority/certificate-builder.js';
import { derBitString, derContext, derOid, derSequence, derSet, derSmallInteger } from './der.js';
import { encodePem } from '../../pki/index.js';
import { newCaSigner } from '../authority/signer.js';

export interface CsrOptions {
  /** The requester's private key (RSA, ECDSA P-256/384/521 or Ed25519). */
  readonly key: KeyObject;
  readonly sans?: SubjectAltNames;
  readonly commonName?: string;
}

/** A PEM PKCS#10 request signed by `key`, with the names as a requested subjectAltName. */
export function buildCsr(options: CsrOptions): string {
  const signer = newCaSigner(options.key);
  const spki = createPublicKey(options.key).export({ format: 'der', type: 'spki' });
  const subject = buildName(options.commonName === undefined ? [] : [{ oid: NAME_OID.commonName, value: options.commonName }]);
  const sans = options.sans;
  const hasNames = sans !== undefined && (sans.uris?.length ?? 0) + (sans.dnsNames?.length ?? 0) + (sans.ips?.length ?? 0) > 0;
  const attributes = hasNames ? [derSequence(derOid('1.2.840.113549.1.9.14'), derSet(derSequence(subjectAltNameExtension(sans, false))))] : [];
  const info = derSequence(derSmallInteger(0), subject, spki, derContext(0, ...attributes));
  return encodePem('CERTIFICATE REQUEST', derSequence(info, signer.algorithmIdentifier, derBitString(signer.sign(info))));
}
