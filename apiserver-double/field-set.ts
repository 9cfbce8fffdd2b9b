import { deepEqual, isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';
import type { ListStrategyResolver } from './resource-type.js';

/**
 * A field path in the managedFields notation: `f:spec`, `k:{"name":"app"}` for an element of a
 * keyed list, `v:"x"` for a member of a set. Paths are compared by their JSON text.
 */
export type FieldPath = string[];

/** Which part of an object a write may touch: everything but status, or status alone. */
export type FieldScope = 'main' | 'status' | 'all';

const TRACKED_METADATA = ['labels', 'annotations', 'finalizers', 'ownerReferences'];

export function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

export function parsePathKey(key: string): FieldPath {
  return JSON.parse(key) as FieldPath;
}

/** The field names along a path, for list strategy lookups. */
function namesOf(path: FieldPath): string[] {
  return path.filter((p) => p.startsWith('f:')).map((p) => p.slice(2));
}

/**
 * Every owned leaf of an object (scalars, atomic lists, empty maps, keyed list elements and set
 * members), mapped to its value. apiVersion, kind and identity metadata are never fields.
 */
export function leafFields(object: JsonObject, lists: ListStrategyResolver, scope: FieldScope): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, value] of Object.entries(object)) {
    if (key === 'apiVersion' || key === 'kind' || value === null || value === undefined) continue;
    if (scope === 'main' && key === 'status') continue;
    if (scope === 'status' && key !== 'status') continue;
    if (key === 'metadata') {
      if (scope === 'status' || !isPlainObject(value)) continue;
      for (const field of TRACKED_METADATA) {
        const v = value[field];
        if (v !== undefined && v !== null) walk(v, ['f:metadata', `f:${field}`], lists, out);
      }
      continue;
    }
    walk(value, [`f:${key}`], lists, out);
  }
  return out;
}

function walk(value: unknown, path: FieldPath, lists: ListStrategyResolver, out: Map<string, unknown>): void {
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== null && v !== undefined);
    if (entries.length === 0) out.set(pathKey(path), {});
    for (const [k, v] of entries) walk(v, [...path, `f:${k}`], lists, out);
    return;
  }
  if (Array.isArray(value)) {
    const strategy = lists(namesOf(path));
    if (strategy.type === 'set') {
      for (const member of value) out.set(pathKey([...path, `v:${JSON.stringify(member)}`]), member);
      return;
    }
    if (strategy.type === 'map' && value.every(isPlainObject)) {
      for (const element of value as JsonObject[]) {
        const elementPath = [...path, `k:${JSON.stringify(listKeyOf(element, strategy.keys))}`];
        out.set(pathKey(elementPath), '.');
        for (const [k, v] of Object.entries(element)) {
          if (v !== null && v !== undefined) walk(v, [...elementPath, `f:${k}`], lists, out);
        }
      }
      return;
    }
  }
  out.set(pathKey(path), value);
}

export function listKeyOf(element: JsonObject, keys: readonly string[]): JsonObject {
  const key: JsonObject = {};
  for (const k of keys) if (element[k] !== undefined) key[k] = element[k];
  return key;
}

/** Removes the field at `path` from `object` (in place), pruning maps left empty. */
export function removeField(object: JsonObject, path: FieldPath): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (!head.startsWith('f:')) return;
  const name = head.slice(2);
  if (rest.length === 0) {
    delete object[name];
    return;
  }
  const child = object[name];
  const next = rest[0] as string;
  if (isPlainObject(child) && next.startsWith('f:')) {
    removeField(child, rest);
    if (Object.keys(child).length === 0) delete object[name];
  } else if (Array.isArray(child)) {
    const at = findElement(child, next);
    if (at < 0) return;
    if (rest.length === 1) {
      child.splice(at, 1);
    } else {
      const element = child[at];
      if (isPlainObject(element)) removeField(element, rest.slice(1));
    }
    if (child.length === 0) delete object[name];
  }
}

function findElement(list: unknown[], element: string): number {
  if (element.startsWith('k:')) {
    const key = JSON.parse(element.slice(2)) as JsonObject;
    return list.findIndex((e) => isPlainObject(e) && Object.entries(key).every(([k, v]) => deepEqual(e[k], v)));
  }
  if (element.startsWith('v:')) {
    const member = JSON.parse(element.slice(2)) as unknown;
    return list.findIndex((e) => deepEqual(e, member));
  }
  return -1;
}

/** Encodes a set of paths as a FieldsV1 tree (`{"f:spec":{"f:replicas":{}}}`). */
export function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  const all = [...paths].map(parsePathKey);
  const prefixes = new Set<string>();
  for (const path of all) for (let i = 1; i < path.length; i++) prefixes.add(pathKey(path.slice(0, i)));
  for (const path of all) {
    let node = root;
    for (const element of path) {
      const next = isPlainObject(node[element]) ? (node[element] as JsonObject) : {};
      node[element] = next;
      node = next;
    }
    if (prefixes.has(pathKey(path))) node['.'] = {};
  }
  return root;
}

/** Decodes a FieldsV1 tree back into a set of path keys. */
export function fromFieldsV1(tree: unknown): Set<string> {
  const out = new Set<string>();
  const visit = (node: unknown, path: FieldPath): void => {
    if (!isPlainObject(node)) return;
    const children = Object.keys(node).filter((k) => k !== '.');
    if (path.length > 0 && (children.length === 0 || Object.hasOwn(node, '.'))) out.add(pathKey(path));
    for (const child of children) visit(node[child], [...path, child]);
  };
  visit(tree, []);
  return out;
}

/** `.spec.containers[name="app"].image`, as conflict messages print a path. */
export function formatFieldPath(path: FieldPath): string {
  return path
    .map((element) => {
      if (element.startsWith('f:')) return `.${element.slice(2)}`;
      if (element.startsWith('k:')) {
        const key = JSON.parse(element.slice(2)) as JsonObject;
        return `[${Object.entries(key)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      if (element.startsWith('v:')) return `[=${element.slice(2)}]`;
      return `[${element}]`;
    })
    .join('');
}
