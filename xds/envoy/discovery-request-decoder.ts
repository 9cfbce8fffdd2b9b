import { isUtf8 } from 'node:buffer';
import { contiguousFieldSpan, Cursor, endsRunOf, firstFieldStart, withoutSpan, type Span } from './wire-fields.js';
import { MeshError } from '../../runtime/index.js';

/**
 * A DiscoveryRequest's `resource_names` (field 3) kept encoded: every ACK of a sidecar repeats
 * its whole subscription (a thousand EDS names at a thousand services), and comparing the bytes
 * with the last request's is a memcmp where decoding and comparing the strings was most of the
 * daemon's work on an endpoint change. The names are decoded only when read. A
 * DeltaDiscoveryRequest's `resource_names_subscribe` is field 3 too: a delta sidecar's first EDS
 * request names the same thousand clusters as its neighbours'.
 */

const RESOURCE_NAMES_FIELD = 3;
/** Below this many bytes of names, the plain decode is as cheap. */
const MIN_ENCODED_BYTES = 512;

const ENCODED_NAMES = Symbol('encodedResourceNames');

/** The request's `resource_names` as received on the wire, when the decoder kept them encoded. */
export function encodedResourceNames(request: object): Buffer | undefined {
  return (request as { [ENCODED_NAMES]?: Buffer })[ENCODED_NAMES];
}

/** Names longer than this are not interned. */
const MAX_INTERNED_LENGTH = 256;
/** Interned names kept at most; the pool starts again empty when full. */
const MAX_INTERNED_NAMES = 65_536;

/**
 * One string per distinct name: a thousand sidecars each subscribe to the same thousand EDS
 * names, and each decoded copy would otherwise live in its watch as long as the stream.
 */
class NamePool {
  private readonly names = new Map<string, string>();

  intern(name: string): string {
    if (name.length > MAX_INTERNED_LENGTH) return name;
    const known = this.names.get(name);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_INTERNED_NAMES) this.names.clear();
    this.names.set(name, name);
    return name;
  }
}

/** The strings of a run of field-3 entries; throws on invalid UTF-8, as the plain decoder does. */
function decodeNames(encoded: Buffer, checked: boolean, pool: NamePool): string[] {
  const names: string[] = [];
  const cursor = new Cursor(encoded);
  while (cursor.pos < encoded.length) {
    cursor.varint();
    const length = cursor.varint();
    const entry = encoded.subarray(cursor.pos, cursor.pos + length);
    if (!checked && !isUtf8(entry)) throw new MeshError('invalid-discovery-request', 'invalid utf8 in resource_names');
    names.push(pool.intern(entry.toString('utf8')));
    cursor.pos += length;
  }
  return names;
}

/** Subscriptions remembered decoded. */
const RECENT_SUBSCRIPTIONS = 8;

/**
 * The names of the last few distinct subscriptions, decoded once and frozen: sidecars of one
 * namespace subscribe to the same EDS names, so most streams' names are one memcmp away.
 */
class RecentSubscriptions {
  private readonly entries: { encoded: Buffer; names: readonly string[] }[] = [];

  /**
   * A recent subscription whose bytes the request carries where its names start, ending there:
   * an ACK repeating its subscription is then found without walking a thousand entries.
   */
  match(bytes: Buffer): { span: Span; encoded: Buffer; names: readonly string[] } | undefined {
    if (this.entries.length === 0) return undefined;
    const start = firstFieldStart(bytes, RESOURCE_NAMES_FIELD);
    if (start < 0) return undefined;
    for (const entry of this.entries) {
      const end = start + entry.encoded.length;
      if (end <= bytes.length && bytes.compare(entry.encoded, 0, entry.encoded.length, start, end) === 0 && endsRunOf(bytes, end, RESOURCE_NAMES_FIELD)) {
        return { span: { start, end }, encoded: bytes.subarray(start, end), names: entry.names };
      }
    }
    return undefined;
  }

  namesOf(encoded: Buffer, decode: () => string[]): readonly string[] {
    for (const entry of this.entries) if (entry.encoded.length === encoded.length && entry.encoded.equals(encoded)) return entry.names;
    const names = Object.freeze(decode());
    // A copy of the bytes: the request's buffer belongs to the stream that sent it.
    this.entries.unshift({ encoded: Buffer.from(encoded), names });
    if (this.entries.length > RECENT_SUBSCRIPTIONS) this.entries.pop();
    return names;
  }
}

/**
 * Wraps the plain decoder of a (Delta)DiscoveryRequest: a request with many names in field 3 is
 * decoded without them, and gets them back as a lazily decoded `property` (`resource_names`, or
 * a delta request's `resource_names_subscribe`) plus the encoded bytes.
 */
export function withEncodedResourceNames(decode: (bytes: Buffer) => object, property = 'resource_names'): (bytes: Buffer) => object {
  const pool = new NamePool();
  const recent = new RecentSubscriptions();
  const withNames = (message: object, encoded: Buffer, names: () => readonly string[]): object => {
    let known: readonly string[] | undefined;
    Object.defineProperty(message, property, { enumerable: true, configurable: true, get: () => (known ??= names()) });
    Object.defineProperty(message, ENCODED_NAMES, { value: encoded, enumerable: false });
    return message;
  };
  return (bytes) => {
    if (bytes.length < MIN_ENCODED_BYTES) return decode(bytes);
    const repeated = recent.match(bytes);
    if (repeated) {
      const message = decode(withoutSpan(bytes, repeated.span));
      // Names further on, after another field, make it another subscription: the walk below decides.
      const more = (message as Record<string, unknown>)[property];
      if (!Array.isArray(more) || more.length === 0) return withNames(message, repeated.encoded, () => repeated.names);
    }
    const span = contiguousFieldSpan(bytes, RESOURCE_NAMES_FIELD);
    if (!span || span.end - span.start < MIN_ENCODED_BYTES) return decode(bytes);
    const encoded = bytes.subarray(span.start, span.end);
    const message = decode(withoutSpan(bytes, span));
    // Each name sits between ASCII bytes (a tag, the last byte of a length), so the whole run is
    // valid UTF-8 only if every name is; otherwise each is checked now, failing as the plain decode.
    const names: readonly string[] | undefined = isUtf8(encoded) ? undefined : decodeNames(encoded, false, pool);
    return withNames(message, encoded, () => names ?? recent.namesOf(encoded, () => decodeNames(encoded, true, pool)));
  };
}
