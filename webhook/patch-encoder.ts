import { isDeeplyFrozen } from '../kube-patch/index.js';

/**
 * Encodes the injection webhook's JSON patches for the wire (base64 of their JSON) and remembers
 * the JSON text of deeply frozen values. The templates' remembered renders are frozen and the
 * injected pods share them (merges and post-processing copy only what they change), so most of a
 * patch's bytes (the sidecar's ports, arguments, mounts, probes, the volumes, the init container)
 * are the very same objects request after request: their text is written once.
 *
 * The text is exactly `JSON.stringify`'s: values that are not plain JSON objects or arrays (a
 * `toJSON`, another prototype) are left to it, and only a value frozen all the way down, which
 * can never change, is remembered, from the second time it is seen. While frozen values hardly
 * ever come back (a stream of new workloads, every render fresh), patches are left to
 * `JSON.stringify` but for a sample that notices when they come back.
 */
export interface PatchEncoder {
  /** Base64 of the JSON of `patch`, as `Buffer.from(JSON.stringify(patch)).toString('base64')`. */
  encode(patch: readonly unknown[]): string;
}

/** Frozen values seen once (text not kept), and those that are not frozen all the way down. */
const SEEN_ONCE = 0;
const NOT_DEEPLY_FROZEN = 1;

/** How often frozen values come back is a moving average over about this many patches. */
const RATE_WINDOW = 16;
/** Below this, patches are encoded by `JSON.stringify` alone but for every SAMPLE_EVERY-th one. */
const COLD_REUSE_RATE = 0.1;
const SAMPLE_EVERY = 16;

export function newPatchEncoder(): PatchEncoder {
  const texts = new WeakMap<object, string | typeof SEEN_ONCE | typeof NOT_DEEPLY_FROZEN>();
  // Of the frozen values met in the patch being encoded, how many were seen before.
  let frozenMet = 0;
  let frozenAgain = 0;
  // While frozen values hardly ever come back (a stream of fresh renders), remembering them only costs.
  let reuseRate = 1;
  let plainPatches = 0;
  // The bytes of the patch are written into one buffer kept for the next, and the last answer is kept:
  // pods of one workload get the very same patch.
  let scratch = Buffer.alloc(0);
  let last: { readonly text: string; readonly base64: string; readonly operations?: readonly WrittenOperation[] | undefined } = { text: '', base64: '' };

  const json = (value: unknown): string | undefined => {
    if (typeof value === 'string') return quote(value);
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    const known = texts.get(value);
    if (typeof known === 'string') {
      frozenMet++;
      frozenAgain++;
      return known;
    }
    if (!isPlainJsonContainer(value)) return JSON.stringify(value);
    if (Object.isFrozen(value)) {
      frozenMet++;
      const text = JSON.stringify(value);
      if (known === undefined) texts.set(value, SEEN_ONCE);
      else {
        frozenAgain++;
        if (known === SEEN_ONCE) texts.set(value, isDeeplyFrozen(value) ? text : NOT_DEEPLY_FROZEN);
      }
      return text;
    }
    if (Array.isArray(value)) {
      let out = '[';
      for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + (json(value[i]) ?? 'null');
      return `${out}]`;
    }
    let out = '{';
    for (const key of Object.keys(value)) {
      const text = json((value as Record<string, unknown>)[key]);
      if (text !== undefined) out += (out.length === 1 ? '' : ',') + quote(key) + ':' + text;
    }
    return `${out}}`;
  };

  /** An operation as `injectionPatch` makes them (`op`, `path`, then `value` if any) is written without looking up its field names. */
  const operation = (op: unknown): string | undefined => {
    if (typeof op !== 'object' || op === null || Object.isFrozen(op) || !isPlainJsonContainer(op) || Array.isArray(op)) return json(op);
    const { op: name, path, value } = op as Record<string, unknown>;
    const fields = Object.keys(op);
    const usual = fields[0] === 'op' && fields[1] === 'path' && (fields.length === 2 || (fields.length === 3 && fields[2] === 'value'));
    if (!usual || typeof name !== 'string' || typeof path !== 'string') return json(op);
    const valueText = fields.length === 3 ? json(value) : undefined;
    return `{"op":${quote(name)},"path":${quote(path)}${valueText === undefined ? '' : `,"value":${valueText}`}}`;
  };

  /** The value, frozen all the way down: itself when it is so already, else a frozen copy of what is not. */
  const snapshot = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (typeof texts.get(value) === 'string' || isDeeplyFrozen(value)) return value;
    if (!isPlainJsonContainer(value)) return JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
    if (Array.isArray(value)) return Object.freeze(value.map(snapshot));
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) setField(copy, key, snapshot((value as Record<string, unknown>)[key]));
    return Object.freeze(copy);
  };

  /**
   * The patch's JSON, and its operations as written: an operation the same, field for field, as
   * the one at its place in the last patch has the same text (pods of one workload get the very
   * same patch; workloads differ in an operation or two). Each is kept as a snapshot that nobody
   * else holds or can change.
   */
  const jsonOf = (
    patch: readonly unknown[],
    previous: readonly WrittenOperation[] | undefined,
  ): { text: string; operations?: WrittenOperation[]; same: boolean } => {
    if (reuseRate < COLD_REUSE_RATE && plainPatches++ % SAMPLE_EVERY !== 0) return { text: JSON.stringify(patch), same: false };
    frozenMet = 0;
    frozenAgain = 0;
    let same = previous !== undefined && previous.length === patch.length;
    const operations: WrittenOperation[] = [];
    let text = '[';
    for (let i = 0; i < patch.length; i++) {
      const before = previous?.[i];
      let written: WrittenOperation;
      if (before !== undefined && sameJson(patch[i], before.snapshot)) {
        written = before;
        frozenMet++;
        frozenAgain++;
      } else {
        same = false;
        written = { snapshot: snapshot(patch[i]), text: operation(patch[i]) ?? 'null' };
      }
      operations.push(written);
      text += (i === 0 ? '' : ',') + written.text;
    }
    text += ']';
    reuseRate += ((frozenMet === 0 ? 0 : frozenAgain / frozenMet) - reuseRate) / RATE_WINDOW;
    return { text, operations, same };
  };

  return {
    encode(patch) {
      const { text, operations, same } = jsonOf(patch, last.operations);
      if (same) return last.base64;
      if (text === last.text) {
        last = { ...last, operations };
        return last.base64;
      }
      // UTF-8 takes at most three bytes per UTF-16 unit.
      if (scratch.length < text.length * 3) scratch = Buffer.allocUnsafe(Math.max(text.length * 3, 2 * scratch.length));
      const length = scratch.write(text, 'utf8');
      last = { text, base64: scratch.toString('base64', 0, length), operations };
      return last.base64;
    },
  };
}

/** An operation of the last patch: a snapshot of it (frozen all the way down), and its text. */
interface WrittenOperation {
  readonly snapshot: unknown;
  readonly text: string;
}

/** A string as JSON: most need no escaping, and looking is cheaper than `JSON.stringify`'s call. */
function quote(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // What JSON.stringify escapes: control characters, quotes, backslashes, lone surrogates (any surrogate sends it there).
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** An array, or an object of the plain prototype without `toJSON`: what `JSON.stringify` writes field by field. */
function isPlainJsonContainer(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * Whether `value` has the JSON text of `frozen`, a value frozen all the way down: the very same
 * value, or plain containers with the same fields in the same order holding the same. (Anything
 * else counts as different: a lost chance, never a wrong text.)
 */
function sameJson(value: unknown, frozen: unknown): boolean {
  if (value === frozen) return true;
  if (typeof value !== 'object' || value === null || typeof frozen !== 'object' || frozen === null) return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(frozen) || value.length !== frozen.length) return false;
    for (let i = 0; i < value.length; i++) if (!sameJson(value[i], frozen[i])) return false;
    return true;
  }
  if (Array.isArray(frozen) || !isPlainJsonContainer(value) || !isPlainJsonContainer(frozen)) return false;
  const keys = Object.keys(value);
  const frozenKeys = Object.keys(frozen);
  if (keys.length !== frozenKeys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== frozenKeys[i] || !sameJson((value as Record<string, unknown>)[key], (frozen as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** A JSON `__proto__` field is data: assigning it would set the object's prototype instead. */
function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
