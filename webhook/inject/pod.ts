import { isPlainObject } from '../../kube-patch/index.js';

/** A pod (or a pod template) as JSON. */
export type Pod = Record<string, unknown>;

/** A container, an env entry, a volume… any JSON object inside a pod. */
export type JsonObject = Record<string, unknown>;

/** The object at `field`, created when absent. */
export function objectField(parent: JsonObject, field: string): JsonObject {
  const current = parent[field];
  if (isPlainObject(current)) return current;
  const created: JsonObject = {};
  parent[field] = created;
  return created;
}

/**
 * Copy-on-write over a pod that shares parts with others (the request's pod, remembered renders,
 * some of them frozen): `own(parent, field)` puts a shallow copy of the object at `field` in its
 * place (an empty one when there is none) and returns it, once per field; later calls give the
 * same copy. `parent` must itself be a copy already owned.
 */
export function copyOnWrite(): (parent: JsonObject, field: string) => JsonObject {
  const owned = new Set<JsonObject>();
  return (parent, field) => {
    const current = parent[field];
    if (isPlainObject(current) && owned.has(current)) return current;
    const copy: JsonObject = isPlainObject(current) ? { ...current } : {};
    parent[field] = copy;
    owned.add(copy);
    return copy;
  };
}

/** The list of objects at `field` (empty when absent). */
export function objectList(parent: JsonObject | undefined, field: string): JsonObject[] {
  const list = parent?.[field];
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
}

/** A labels or annotations map, its non-string entries left out: the map itself when all are strings (the usual case), to read only. */
export function stringMap(value: unknown): Readonly<Record<string, string>> {
  if (!isPlainObject(value)) return {};
  for (const key in value) {
    if (Object.hasOwn(value, key) && typeof value[key] !== 'string') {
      return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    }
  }
  return value as Record<string, string>;
}

export function metadataOf(pod: Pod): JsonObject {
  return objectField(pod, 'metadata');
}

export function specOf(pod: Pod): JsonObject {
  return objectField(pod, 'spec');
}

/** Drops `field` when it holds an empty object or list, as a pod had it before injection added to it. */
export function dropIfEmpty(parent: JsonObject, field: string): void {
  const value = parent[field];
  if ((Array.isArray(value) && value.length === 0) || (isPlainObject(value) && Object.keys(value).length === 0)) delete parent[field];
}

/** The env entry named `name` of a container, if any. */
export function envValue(container: JsonObject | undefined, name: string): string | undefined {
  const entry = objectList(container, 'env').find((env) => env['name'] === name);
  return typeof entry?.['value'] === 'string' ? entry['value'] : undefined;
}

/** Sets (or replaces) an env entry of a container (a copy of its own: the env list is a new one). */
export function setEnv(container: JsonObject, name: string, value: string): void {
  const env = objectList(container, 'env');
  const at = env.findIndex((entry) => entry['name'] === name);
  if (at >= 0) env[at] = { name, value };
  else env.push({ name, value });
  container['env'] = env;
}
