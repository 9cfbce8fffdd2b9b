import { clone, deepEqual, deepFreeze, isPlainObject } from './json-value.js';
import type { JsonObject } from './json-value.js';
import type { ListStrategyResolver } from './list-strategy.js';

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';
const DOLLAR = 0x24;

/**
 * Strategic merge patch as kubectl apply sends it for built-in kinds: maps merge, lists with a
 * merge key merge element by element, `$patch` (replace/delete/merge), `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` directives.
 */
export function applyStrategicMergePatch(original: unknown, patch: unknown, lists: ListStrategyResolver, options: MergeOptions = {}): unknown {
  return mergeMap(isPlainObject(original) ? original : {}, isPlainObject(patch) ? patch : {}, [], { lists, stripped: options.strippedValues });
}

export interface MergeOptions {
  /**
   * Where the directive-free forms of frozen patch values are kept, for a caller that merges the
   * same frozen patch again and again (the injector's remembered renders): a frozen value that
   * needs its directives or null fields taken out gives the same frozen copy every time.
   */
  readonly strippedValues?: StrippedValues;
}

export type StrippedValues = WeakMap<object, unknown>;

interface Merge {
  readonly lists: ListStrategyResolver;
  readonly stripped: StrippedValues | undefined;
}

function mergeMap(original: JsonObject, patch: JsonObject, path: string[], merge: Merge): JsonObject | undefined {
  const directive = patch['$patch'];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return stripDirectives(patch, merge.stripped) as JsonObject;
  const result: JsonObject = { ...original };
  const orders = new Map<string, unknown[]>();
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys') continue;
    if (key.startsWith(SET_ORDER)) {
      if (Array.isArray(value)) orders.set(key.slice(SET_ORDER.length), value);
      continue;
    }
    if (key.startsWith(DELETE_FROM_PRIMITIVE)) {
      const field = key.slice(DELETE_FROM_PRIMITIVE.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(value)) {
        result[field] = current.filter((v) => !value.some((d) => deepEqual(d, v)));
      }
      continue;
    }
    if (value === null) {
      delete result[key];
      continue;
    }
    if (Array.isArray(value)) {
      const current = result[key];
      result[key] = mergeList(Array.isArray(current) ? current : [], value, [...path, key], merge);
    } else if (isPlainObject(value)) {
      const current = result[key];
      const merged = mergeMap(isPlainObject(current) ? current : {}, value, [...path, key], merge);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  for (const [field, order] of orders) {
    const current = result[field];
    if (Array.isArray(current)) result[field] = reorder(current, order, merge.lists([...path, field]));
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

function mergeList(original: unknown[], patch: unknown[], path: string[], merge: Merge): unknown[] {
  const strategy = merge.lists(path);
  if (patch.some((e) => isPlainObject(e) && e['$patch'] === 'replace')) {
    return patch.filter((e) => !(isPlainObject(e) && e['$patch'] === 'replace')).map((e) => stripDirectives(e, merge.stripped));
  }
  if (strategy.type === 'set') {
    const result = [...original];
    for (const value of patch) if (!result.some((v) => deepEqual(v, value))) result.push(clone(value));
    return result;
  }
  if (strategy.type !== 'map') return patch.map((e) => stripDirectives(e, merge.stripped));
  const mergeKey = strategy.keys[0] as string;
  const result = [...original];
  for (const element of patch) {
    if (!isPlainObject(element)) continue;
    const at = result.findIndex((e) => isPlainObject(e) && deepEqual(e[mergeKey], element[mergeKey]));
    if (element['$patch'] === 'delete') {
      if (at >= 0) result.splice(at, 1);
      continue;
    }
    if (at >= 0) {
      const merged = mergeMap(result[at] as JsonObject, element, path, merge);
      if (merged === undefined) result.splice(at, 1);
      else result[at] = merged;
    } else {
      result.push(stripDirectives(element, merge.stripped));
    }
  }
  return result;
}

/** Puts the listed elements first, in the given order; the others keep their relative order. */
function reorder(list: unknown[], order: unknown[], strategy: ReturnType<ListStrategyResolver>): unknown[] {
  const key = strategy.type === 'map' ? strategy.keys[0] : undefined;
  const same = (a: unknown, b: unknown): boolean => (key !== undefined && isPlainObject(a) && isPlainObject(b) ? deepEqual(a[key], b[key]) : deepEqual(a, b));
  const ordered: unknown[] = [];
  for (const wanted of order) {
    const found = list.find((e) => same(e, wanted) && !ordered.includes(e));
    if (found !== undefined) ordered.push(found);
  }
  return [...ordered, ...list.filter((e) => !ordered.includes(e))];
}

/**
 * A patch value as it goes into the result: without directives and null fields. What holds none
 * is the value itself, shared with the result (no copy: the result is read, or copied before it is
 * changed, as the original's untouched parts already are); only what changes is copied.
 */
function stripDirectives(value: unknown, memo: StrippedValues | undefined): unknown {
  if (memo === undefined || typeof value !== 'object' || value === null || !Object.isFrozen(value)) return strip(value);
  // Kept for the value as a whole only (an added container, a volume): remembering each of its
  // parts would cost more than walking them.
  const known = memo.get(value);
  if (known !== undefined) return known;
  // Frozen like its source: what stripping copied is frozen, what it shares is so already.
  const stripped = deepFreeze(strip(value));
  memo.set(value, stripped);
  return stripped;
}

function strip(value: unknown): unknown {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      const stripped = strip(element);
      if (out === undefined && stripped !== element) out = value.slice(0, i);
      out?.push(stripped);
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return clone(value);
  const keys = Object.keys(value);
  let out: JsonObject | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = value[k];
    const dropped = v === null || isDirective(k);
    const stripped = dropped ? undefined : strip(v);
    if (out === undefined && (dropped || stripped !== v)) out = copyOfFields(value, keys, i);
    if (out !== undefined && !dropped) setField(out, k, stripped);
  }
  return out ?? value;
}

/** A new object with the first `count` of `keys` of `value`. */
function copyOfFields(value: JsonObject, keys: readonly string[], count: number): JsonObject {
  const out: JsonObject = {};
  for (let i = 0; i < count; i++) setField(out, keys[i] as string, value[keys[i] as string]);
  return out;
}

/** A JSON `__proto__` field is data: assigning it would set the object's prototype instead. */
function setField(out: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** Every directive starts with `$`: the one character looked at for the (many) fields that are not. */
function isDirective(key: string): boolean {
  return key.charCodeAt(0) === DOLLAR && (key === '$patch' || key === '$retainKeys' || key.startsWith(SET_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE));
}
