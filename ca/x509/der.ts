import { MeshError } from '../../runtime/index.js';

/**
 * A minimal DER encoder and decoder: just what certificates and PKCS#10 requests need. Writing
 * the few structures by hand keeps the signing hot path free of a generic ASN.1 object model.
 */

export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

/** One decoded element: `start`/`end` bound the content; `headerStart` is where the tag byte sits. */
export interface DerElement {
  readonly tag: number;
  readonly headerStart: number;
  readonly start: number;
  readonly end: number;
}

export class DerError extends MeshError<'der'> {
  constructor(message: string) {
    super('der', message);
  }
}

function lengthBytes(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with the given tag around `content` (several parts are concatenated). */
export function derTlv(tag: number, ...content: readonly Buffer[]): Buffer {
  const body = content.length === 1 ? content[0]! : Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export function derSequence(...items: readonly Buffer[]): Buffer {
  return derTlv(TAG.sequence, ...items);
}

export function derSet(...items: readonly Buffer[]): Buffer {
  return derTlv(TAG.set, ...items);
}

/** A constructed context-specific tag: `[n]` EXPLICIT, or `[n]` IMPLICIT of a constructed type. */
export function derContext(n: number, ...content: readonly Buffer[]): Buffer {
  return derTlv(0xa0 | n, ...content);
}

/** A primitive context-specific tag: `[n]` IMPLICIT of a primitive type (GeneralName URI, DNS, IP). */
export function derContextPrimitive(n: number, content: Buffer): Buffer {
  return derTlv(0x80 | n, content);
}

/** An INTEGER from unsigned big-endian bytes (a zero byte is prepended when the top bit is set). */
export function derUnsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && (bytes[i + 1]! & 0x80) === 0) i++;
  const trimmed = bytes.subarray(i);
  return derTlv(TAG.integer, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function derSmallInteger(value: number): Buffer {
  const bytes: number[] = [];
  let n = value;
  do {
    bytes.unshift(n & 0xff);
    n = Math.floor(n / 256);
  } while (n > 0);
  return derUnsignedInteger(Buffer.from(bytes));
}

export function derBoolean(value: boolean): Buffer {
  return Buffer.from([TAG.boolean, 1, value ? 0xff : 0]);
}

export function derNull(): Buffer {
  return Buffer.from([TAG.null, 0]);
}

export function derOctetString(content: Buffer): Buffer {
  return derTlv(TAG.octetString, content);
}

export function derBitString(content: Buffer, unusedBits = 0): Buffer {
  return derTlv(TAG.bitString, Buffer.from([unusedBits]), content);
}

export function derUtf8String(text: string): Buffer {
  return derTlv(TAG.utf8String, Buffer.from(text, 'utf8'));
}

export function derIa5String(text: string): Buffer {
  return derTlv(TAG.ia5String, Buffer.from(text, 'ascii'));
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function derOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0)) throw new DerError(`bad OID ${dotted}`);
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift(0x80 | (n & 0x7f));
    out.push(...chunk);
  }
  return derTlv(TAG.oid, Buffer.from(out));
}

/** RFC 5280 time: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, UTC. */
export function derTime(ms: number): Buffer {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
  const rest = `${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}Z`;
  return year >= 1950 && year < 2050
    ? derTlv(TAG.utcTime, Buffer.from(`${two(year % 100)}${rest}`, 'latin1'))
    : derTlv(TAG.generalizedTime, Buffer.from(`${String(year).padStart(4, '0')}${rest}`, 'latin1'));
}

/** Reads the element whose tag byte is at `offset`, bounded by `limit`. */
export function derRead(buf: Buffer, offset = 0, limit = buf.length): DerElement {
  if (offset + 2 > limit) throw new DerError('truncated element');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte tags are not supported');
  let length = buf[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new DerError('unsupported length encoding');
    if (start + count > limit) throw new DerError('truncated length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[start + i]!;
    if (length < 0x80 || buf[start] === 0) throw new DerError('non-minimal length');
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new DerError('element overruns its container');
  return { tag, headerStart: offset, start, end };
}

/** The children of a constructed element, in order. */
export function derChildren(buf: Buffer, parent: DerElement): DerElement[] {
  const out: DerElement[] = [];
  for (let offset = parent.start; offset < parent.end;) {
    const child = derRead(buf, offset, parent.end);
    out.push(child);
    offset = child.end;
  }
  return out;
}

/** Reads `buf` as exactly one element of the expected tag. */
export function derReadWhole(buf: Buffer, expectedTag: number): DerElement {
  const el = derRead(buf, 0);
  if (el.tag !== expectedTag) throw new DerError(`expected tag 0x${expectedTag.toString(16)}, got 0x${el.tag.toString(16)}`);
  if (el.end !== buf.length) throw new DerError('trailing data after the element');
  return el;
}

export function expectTag(el: DerElement | undefined, tag: number, what: string): DerElement {
  if (el === undefined) throw new DerError(`missing ${what}`);
  if (el.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, got 0x${el.tag.toString(16)}`);
  return el;
}

/** The whole TLV (header and content) of an element. */
export function derRaw(buf: Buffer, el: DerElement): Buffer {
  return buf.subarray(el.headerStart, el.end);
}

export function derContent(buf: Buffer, el: DerElement): Buffer {
  return buf.subarray(el.start, el.end);
}

/** The dotted form of an OBJECT IDENTIFIER element. */
export function decodeOid(buf: Buffer, el: DerElement): string {
  const bytes = derContent(buf, el);
  if (bytes.length === 0) throw new DerError('empty OID');
  const arcs: number[] = [];
  let value = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      if (arcs.length === 0) {
        const first = value < 80 ? Math.floor(value / 40) : 2;
        arcs.push(first, value - first * 40);
      } else {
        arcs.push(value);
      }
      value = 0;
    }
  }
  if ((bytes[bytes.length - 1]! & 0x80) !== 0) throw new DerError('truncated OID');
  return arcs.join('.');
}

/** The content bytes of a BIT STRING with no unused bits (keys and signatures). */
export function decodeBitStringBytes(buf: Buffer, el: DerElement): Buffer {
  const content = derContent(buf, el);
  if (content.length === 0 || content[0] !== 0) throw new DerError('bit string with unused bits');
  return content.subarray(1);
}

/** Milliseconds since the epoch of a UTCTime or GeneralizedTime element. */
export function decodeTime(buf: Buffer, el: DerElement): number {
  const text = derContent(buf, el).toString('ascii');
  const m = /^(\d{2}|\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m) throw new DerError(`unsupported time ${text}`);
  let year = Number(m[1]);
  if (el.tag === TAG.utcTime) year += year < 50 ? 2000 : 1900;
  return Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}
