/**
 * Encodings of message parts that a caller keeps between messages, found by the keys the
 * message's builder gave the parts (`withPartKey`): a keyed part is encoded once for as long as
 * the caller keeps its bytes, and the caller decides what a key names and how long it lives.
 * The virtual hosts of a RouteConfiguration take keys.
 */
export interface EncodedParts {
  get(key: string): Uint8Array | undefined;
  set(key: string, bytes: Uint8Array): unknown;
}

const PART_KEY = Symbol('encoded part key');

/**
 * Gives `part` the key its encoding is kept under: equal keys must mean equal parts for as long
 * as the caller keeps the encodings. The key is no field of the message (not enumerable).
 */
export function withPartKey<T extends object>(part: T, key: string): T {
  Object.defineProperty(part, PART_KEY, { value: key, enumerable: false });
  return part;
}

export function partKeyOf(part: object): string | undefined {
  const key: unknown = (part as { [PART_KEY]?: unknown })[PART_KEY];
  return typeof key === 'string' ? key : undefined;
}
