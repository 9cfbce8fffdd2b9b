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
    if (!skipValue(cursor, wireType)) return undefined;
    if (Math.floor(tag / 8) === field) {
      if (wireType !== LENGTH_DELIMITED) return undefined;
      if (!span) span = { start, end: cursor.pos };
      else if (span.end === start) span.end = cursor.pos;
      else return undefined;
    }
  }
  return span;
}

/** Where the first top-level entry of `field` starts; -1 when there is none or the message is malformed before it. */
export function firstFieldStart(bytes: Buffer, field: number): number {
  const cursor = new Cursor(bytes);
  while (cursor.pos < bytes.length) {
    const start = cursor.pos;
    const tag = cursor.varint();
    if (tag < 0) return -1;
    if (Math.floor(tag / 8) === field) return start;
    if (!skipValue(cursor, tag % 8)) return -1;
  }
  return -1;
}

/** The first top-level string entry of `field`, read without decoding the rest; undefined when there is none or the message is malformed before it. */
export function firstStringField(bytes: Buffer, field: number): string | undefined {
  const start = firstFieldStart(bytes, field);
  if (start < 0) return undefined;
  const cursor = new Cursor(bytes);
  cursor.pos = start;
  if (cursor.varint() % 8 !== LENGTH_DELIMITED) return undefined;
  const length = cursor.varint();
  if (length < 0 || cursor.pos + length > bytes.length) return undefined;
  return bytes.toString('utf8', cursor.pos, cursor.pos + length);
}

/** True when what starts at `offset` is the end of the message or an entry of a field other than `field`. */
export function endsRunOf(bytes: Buffer, offset: number, field: number): boolean {
  if (offset === bytes.length) return true;
  const cursor = new Cursor(bytes);
  cursor.pos = offset;
  const tag = cursor.varint();
  return tag >= 0 && Math.floor(tag / 8) !== field;
}

/** Moves past a value of the wire type; false when the type is unknown or the value runs past the end. */
function skipValue(cursor: Cursor, wireType: number): boolean {
  if (wireType === 0) return cursor.varint() >= 0;
  if (wireType === 1) cursor.pos += 8;
  else if (wireType === LENGTH_DELIMITED) {
    const length = cursor.varint();
    if (length < 0) return false;
    cursor.pos += length;
  } else if (wireType === 5) cursor.pos += 4;
  else return false;
  return cursor.pos <= cursor.bytes.length;
}

/** The message without the span's bytes: its other fields. */
export function withoutSpan(bytes: Buffer, span: Span): Buffer {
  return Buffer.concat([bytes.subarray(0, span.start), bytes.subarray(span.end)]);
}
