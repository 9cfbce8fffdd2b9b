import { CaError } from '../ca-error.js';
import { DerError, TAG, decodeOid, derChildren, derContent, derRead, derReadWhole, expectTag, type DerElement } from './der.js';
import { decodePemBlocks } from '../../pki/index.js';

/** One name of the subjectAltName a CSR asks for. */
export interface RequestedName {
  readonly type: 'uri' | 'dns' | 'ip' | 'email' | 'other';
  /** The text of URI, DNS and email names; the address of IP names; the tag byte in hex otherwise. */
  readonly value: string;
}

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const SUBJECT_ALT_NAME = '2.5.29.17';

/**
 * The subjectAltName names a PEM PKCS#10 request asks for (in its extensionRequest attribute),
 * in order; empty when it asks for none. Only matters when someone else signs the request as
 * written: our CA ignores them. Throws CaError `csr-malformed`.
 */
export function csrRequestedNames(pem: string): RequestedName[] {
  const blocks = decodePemBlocks(pem).filter((b) => b.label === 'CERTIFICATE REQUEST' || b.label === 'NEW CERTIFICATE REQUEST');
  if (blocks.length !== 1) throw new CaError('csr-malformed', `expected one PEM certificate request, found ${blocks.length}`);
  const der = blocks[0]!.der;
  try {
    const request = derReadWhole(der, TAG.sequence);
    const info = expectTag(derChildren(der, request)[0], TAG.sequence, 'certificationRequestInfo');
    const attributes = derChildren(der, info).find((el) => el.tag === 0xa0);
    if (!attributes) return [];
    for (const attribute of derChildren(der, attributes)) {
      const [type, values] = derChildren(der, expectTag(attribute, TAG.sequence, 'attribute'));
      if (decodeOid(der, expectTag(type, TAG.oid, 'attribute type')) !== EXTENSION_REQUEST) continue;
      const [extensions] = derChildren(der, expectTag(values, TAG.set, 'attribute values'));
      for (const extension of derChildren(der, expectTag(extensions, TAG.sequence, 'extensions'))) {
        const parts = derChildren(der, expectTag(extension, TAG.sequence, 'extension'));
        if (decodeOid(der, expectTag(parts[0], TAG.oid, 'extnID')) !== SUBJECT_ALT_NAME) continue;
        const value = expectTag(parts[parts.length - 1], TAG.octetString, 'extnValue');
        const names = expectTag(derRead(der, value.start, value.end), TAG.sequence, 'GeneralNames');
        return derChildren(der, names).map((name) => generalName(der, name));
      }
    }
    return [];
  } catch (err) {
    if (err instanceof DerError) throw new CaError('csr-malformed', `malformed certificate request: ${err.message}`, { cause: err });
    throw err;
  }
}

function generalName(der: Buffer, el: DerElement): RequestedName {
  const content = derContent(der, el);
  switch (el.tag) {
    case 0x81:
      return { type: 'email', value: content.toString('latin1') };
    case 0x82:
      return { type: 'dns', value: content.toString('latin1') };
    case 0x86:
      return { type: 'uri', value: content.toString('latin1') };
    case 0x87:
      return { type: 'ip', value: ipText(content) };
    default:
      return { type: 'other', value: el.tag.toString(16) };
  }
}

function ipText(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
    return groups.join(':');
  }
  return bytes.toString('hex');
}
