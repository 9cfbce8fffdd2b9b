/** Reading a protobuf message's top-level fields on the wire without decoding it. */

const LENGTH_DELIMITED = 2;

export interface Span {
  start: number;
  end: number;
}

/** Reads varints without allocating: `pos` moves past each; -1 past the end or beyond 2^53. */
export class Cursor {
  pos = 0;
  constructor(readonly bytes: Buffer) {}

  varint(): number {
    let value = 0;
    let scale = 1;
    const { bytes } = this;
    for (let i = this.pos; i < bytes.length && i < this.pos + 8; i++) {
      const byte = bytes[i] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        this.pos = i + 1;
        return value;
      }
      scale *= 128;
    }
    return -1;
  }
}

/**
 * The one contiguous run of top-level length-delimited entries of `field` (a repeated string or
 * message field, as encoders write it), or undefined when there is none, the entries are apart,
 * the field has another wire type, or the message is malformed (the plain decoder then says why).
 */
export function contiguousFieldSpan(bytes: Buffer, field: number): Span | undefined {
  let span: Span | undefined;
  const cursor = new Cursor(bytes);
  while (cursor.pos < bytes.length) {
    const start = cursor.pos;
    const tag = cursor.varint();
    if (tag < 0) return undefined;
    const wireType = tag % 8;
    if (wireType === 0) {
      if (cursor.varint() < 0) return undefined;
    } else if (wireType === 1) cursor.pos += 8;
    else if (wireType === LENGTH_DELIMITED) {
      const length = cursor.varint();
      if (length < 0) return undefined;
      cursor.pos += length;
    } else if (wireType === 5) cursor.pos += 4;
    else return undefined;
    if (cursor.pos > bytes.length) return undefined;
    if (Math.floor(tag / 8) === field) {
      if (wireType !== LENGTH_DELIMITED) return undefined;
      if (!span) span = { start, end: cursor.pos };
      else if (span.end === start) span.end = cursor.pos;
      else return undefined;
    }
  }
  return span;
}

/** The message without the span's bytes: its other fields. */
export function withoutSpan(bytes: Buffer, span: Span): Buffer {
  return Buffer.concat([bytes.subarray(0, span.start), bytes.subarray(span.end)]);
}
