import { X509Certificate } from 'node:crypto';
import { CaError } from '../ca-error.js';
import { TAG, decodeOid, decodeTime, derChildren, derContent, derRaw, derRead, derReadWhole, expectTag, type DerElement } from './der.js';
import { keyIdentifier } from '../authority/certificate-builder.js';
import { decodeCertificates, encodePem } from '../../pki/index.js';
import { errorMessage } from '../../runtime/index.js';

/** A parsed certificate of a CA chain: the raw pieces the signer reuses, and node's view of it. */
export interface CertificateInfo {
  readonly der: Buffer;
  readonly pem: string;
  readonly x509: X509Certificate;
  /** The subject Name, DER, to be written as the issuer of what this certificate signs. */
  readonly subject: Buffer;
  readonly issuer: Buffer;
  readonly subjectPublicKeyInfo: Buffer;
  /** The subjectKeyIdentifier extension, or the RFC 5280 method-1 identifier when absent. */
  readonly subjectKeyId: Buffer;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  readonly isCa: boolean;
  readonly isSelfSigned: boolean;
}

export function parseCertificate(der: Buffer): CertificateInfo {
  try {
    const cert = derReadWhole(der, TAG.sequence);
    const tbs = expectTag(derChildren(der, cert)[0], TAG.sequence, 'tbsCertificate');
    const fields = derChildren(der, tbs);
    const offset = fields[0]?.tag === 0xa0 ? 1 : 0;
    const field = (i: number, tag: number, what: string): DerElement => expectTag(fields[offset + i], tag, what);
    const issuer = derRaw(der, field(2, TAG.sequence, 'issuer'));
    const validity = derChildren(der, field(3, TAG.sequence, 'validity'));
    const subject = derRaw(der, field(4, TAG.sequence, 'subject'));
    const subjectPublicKeyInfo = derRaw(der, field(5, TAG.sequence, 'subjectPublicKeyInfo'));
    const extensions = fields.slice(offset + 6).find((f) => f.tag === 0xa3);
    const x509 = new X509Certificate(der);
    return {
      der,
      pem: encodePem('CERTIFICATE', der),
      x509,
      subject,
      issuer,
      subjectPublicKeyInfo,
      subjectKeyId: (extensions && findSubjectKeyId(der, extensions)) ?? keyIdentifier(subjectPublicKeyInfo),
      notBeforeMs: timeOf(der, validity[0]),
      notAfterMs: timeOf(der, validity[1]),
      isCa: x509.ca,
      isSelfSigned: issuer.equals(subject) && x509.verify(x509.publicKey),
    };
  } catch (err) {
    if (err instanceof CaError) throw err;
    throw new CaError('ca-material-invalid', `cannot parse certificate: ${errorMessage(err)}`, { cause: err });
  }
}

/** Every certificate of a PEM text, parsed. */
export function parseCertificatesPem(text: string, what: string): CertificateInfo[] {
  try {
    return decodeCertificates(text, what).map(parseCertificate);
  } catch (err) {
    if (err instanceof CaError) throw err;
    throw new CaError('ca-material-invalid', errorMessage(err), { cause: err });
  }
}

function timeOf(der: Buffer, el: DerElement | undefined): number {
  if (!el || (el.tag !== TAG.utcTime && el.tag !== TAG.generalizedTime)) throw new CaError('ca-material-invalid', 'bad validity time');
  return decodeTime(der, el);
}

function findSubjectKeyId(der: Buffer, explicitExtensions: DerElement): Buffer | undefined {
  const list = expectTag(derRead(der, explicitExtensions.start, explicitExtensions.end), TAG.sequence, 'extensions');
  for (const ext of derChildren(der, list)) {
    const parts = derChildren(der, ext);
    if (decodeOid(der, expectTag(parts[0], TAG.oid, 'extnID')) !== '2.5.29.14') continue;
    const value = expectTag(parts[parts.length - 1], TAG.octetString, 'extnValue');
    const inner = derRead(der, value.start, value.end);
    return Buffer.from(derContent(der, expectTag(inner, TAG.octetString, 'keyIdentifier')));
  }
  return undefined;
}
