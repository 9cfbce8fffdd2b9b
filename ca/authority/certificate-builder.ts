import { createHash, randomBytes } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import {
  TAG,
  decodeBitStringBytes,
  derBitString,
  derBoolean,
  derChildren,
  derContext,
  derContextPrimitive,
  derOctetString,
  derOid,
  derReadWhole,
  derSequence,
  derSet,
  derSmallInteger,
  derTime,
  derUnsignedInteger,
  derUtf8String,
  expectTag,
} from '../x509/der.js';
import { CaError } from '../ca-error.js';
import type { CaSigner } from './signer.js';

/** Everything of a certificate except its signature; names, key and extensions already DER. */
export interface CertificateTemplate {
  readonly serial: Buffer;
  readonly issuer: Buffer;
  readonly subject: Buffer;
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  readonly subjectPublicKeyInfo: Buffer;
  readonly extensions: readonly Buffer[];
}

/** Assembles the TBS certificate, signs it, and returns the certificate DER. */
export function buildCertificate(template: CertificateTemplate, signer: CaSigner): Buffer {
  const tbs = derSequence(
    VERSION_3,
    derUnsignedInteger(template.serial),
    signer.algorithmIdentifier,
    template.issuer,
    derSequence(derTime(template.notBeforeMs), derTime(template.notAfterMs)),
    template.subject,
    template.subjectPublicKeyInfo,
    derContext(3, derSequence(...template.extensions)),
  );
  return derSequence(tbs, signer.algorithmIdentifier, derBitString(signer.sign(tbs)));
}

const VERSION_3 = Buffer.from([0xa0, 0x03, 0x02, 0x01, 0x02]);

/** A positive 128-bit serial number (RFC 5280 allows up to 20 octets). */
export function randomSerial(): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial;
}

/** An X.501 Name with one attribute per RDN, in the given order. */
export function buildName(attributes: ReadonlyArray<{ readonly oid: string; readonly value: string }>): Buffer {
  return derSequence(...attributes.map((a) => derSet(derSequence(derOid(a.oid), derUtf8String(a.value)))));
}

export const NAME_OID = { commonName: '2.5.4.3', organization: '2.5.4.10' } as const;

/** An Extension; `oid` dotted or already DER-encoded (hot paths encode their OIDs once). */
export function buildExtension(oid: string | Buffer, critical: boolean, value: Buffer): Buffer {
  const id = typeof oid === 'string' ? derOid(oid) : oid;
  return critical ? derSequence(id, derBoolean(true), derOctetString(value)) : derSequence(id, derOctetString(value));
}

export interface SubjectAltNames {
  readonly uris?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ips?: readonly string[];
}

/** The subjectAltName extension; critical when the subject is empty (RFC 5280 4.2.1.6). */
export function subjectAltNameExtension(names: SubjectAltNames, critical: boolean, oid: string | Buffer = '2.5.29.17'): Buffer {
  const general = [
    ...(names.dnsNames ?? []).map((d) => derContextPrimitive(2, Buffer.from(d, 'ascii'))),
    ...(names.uris ?? []).map((u) => derContextPrimitive(6, Buffer.from(u, 'ascii'))),
    ...(names.ips ?? []).map((ip) => derContextPrimitive(7, ipBytes(ip))),
  ];
  if (general.length === 0) throw new CaError('identity-invalid', 'a certificate needs at least one subject alternative name');
  return buildExtension(oid, critical, derSequence(...general));
}

export const KEY_USAGE = {
  digitalSignature: 0,
  keyEncipherment: 2,
  keyCertSign: 5,
  cRLSign: 6,
} as const;

/** The keyUsage extension (always critical) from bit numbers. */
export function keyUsageExtension(bits: readonly number[]): Buffer {
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[Math.floor(bit / 8)]! |= 0x80 >> (bit % 8);
  return buildExtension('2.5.29.15', true, derBitString(bytes, 7 - (highest % 8)));
}

export const EXT_KEY_USAGE = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' } as const;

export function extKeyUsageExtension(oids: readonly string[]): Buffer {
  return buildExtension('2.5.29.37', false, derSequence(...oids.map(derOid)));
}

/** basicConstraints, critical: `cA` true for CAs (with an optional path length), empty otherwise. */
export function basicConstraintsExtension(isCa: boolean, pathLength?: number): Buffer {
  const fields = isCa ? [derBoolean(true), ...(pathLength === undefined ? [] : [derSmallInteger(pathLength)])] : [];
  return buildExtension('2.5.29.19', true, derSequence(...fields));
}

export function subjectKeyIdExtension(keyId: Buffer, oid: string | Buffer = '2.5.29.14'): Buffer {
  return buildExtension(oid, false, derOctetString(keyId));
}

export const EXTENSION_OID = { subjectAltName: '2.5.29.17', subjectKeyId: '2.5.29.14' } as const;

/** Random positive 128-bit serial numbers, cut from a pool refilled 4 KiB at a time. */
export function newSerialSource(): () => Buffer {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + 16 > pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    const serial = Buffer.from(pool.subarray(offset, offset + 16));
    offset += 16;
    serial[0] = (serial[0]! & 0x7f) | 0x01;
    return serial;
  };
}

export function authorityKeyIdExtension(keyId: Buffer): Buffer {
  return buildExtension('2.5.29.35', false, derSequence(derContextPrimitive(0, keyId)));
}

/** RFC 5280 method 1: SHA-1 of the subjectPublicKey bits of a SubjectPublicKeyInfo. */
export function keyIdentifier(subjectPublicKeyInfo: Buffer): Buffer {
  const spki = derReadWhole(subjectPublicKeyInfo, TAG.sequence);
  const [, bits] = derChildren(subjectPublicKeyInfo, spki);
  return createHash('sha1')
    .update(decodeBitStringBytes(subjectPublicKeyInfo, expectTag(bits, TAG.bitString, 'subjectPublicKey')))
    .digest();
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (isIPv6(ip)) return ipv6Bytes(ip);
  throw new CaError('identity-invalid', `not an IP address: ${ip}`);
}

function ipv6Bytes(ip: string): Buffer {
  let text = ip.replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (v4) {
    tail = v4[1]!.split('.').map(Number);
    text = text.slice(0, -v4[1]!.length) + '0:0';
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  if (tail.length === 4) Buffer.from(tail).copy(out, 12);
  return out;
}
