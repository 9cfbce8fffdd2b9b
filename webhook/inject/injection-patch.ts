import type { Operation } from 'fast-json-patch';
import type { Pod } from './pod.js';

/**
 * The RFC 6902 operations that turn the original pod into the injected one: the webhook's
 * `patch`. Managed fields are left out of both sides (the API server keeps its own; comparing
 * them only costs time).
 *
 * The operations are exactly those of fast-json-patch's `compare` (same walk, same order), whose
 * JSON round trip per added value was a tenth of an injection's time. The values are the injected
 * pod's own: encode the patch before changing that pod, if ever.
 */
export function injectionPatch(original: Pod, injected: Pod): Operation[] {
  const operations: Operation[] = [];
  diff(withoutManagedFields(original), withoutManagedFields(injected), '', operations);
  return operations;
}

/** `compare` only reads its inputs, so a shallow copy of the pod and its metadata is enough to leave the field out. */
function withoutManagedFields(pod: Pod): Pod {
  const metadata = pod['metadata'];
  if (typeof metadata !== 'object' || metadata === null || !Object.hasOwn(metadata, 'managedFields')) return pod;
  const { managedFields: _managedFields, ...rest } = metadata as Record<string, unknown>;
  return { ...pod, metadata: rest };
}

type Container = Record<string, unknown> | unknown[];

/** fast-json-patch's `_generate` without `test` operations: removals and replacements walking the old keys backwards, then additions. */
function diff(before: Container, after: Container, path: string, operations: Operation[]): void {
  if (before === after) return;
  if (typeof (after as { toJSON?: unknown }).toJSON === 'function') after = (after as { toJSON: () => Container }).toJSON();
  const newKeys = keysOf(after);
  const oldKeys = keysOf(before);
  const oldRecord = before as Record<string, unknown>;
  const newRecord = after as Record<string, unknown>;
  let deleted = false;
  for (let i = oldKeys.length - 1; i >= 0; i--) {
    const key = oldKeys[i] as string;
    const oldValue = oldRecord[key];
    if (Object.hasOwn(after, key) && !(newRecord[key] === undefined && oldValue !== undefined && !Array.isArray(after))) {
      const newValue = newRecord[key];
      if (typeof oldValue === 'object' && oldValue !== null && typeof newValue === 'object' && newValue !== null && Array.isArray(oldValue) === Array.isArray(newValue)) {
        diff(oldValue as Container, newValue as Container, `${path}/${escapePathComponent(key)}`, operations);
      } else if (oldValue !== newValue) {
        operations.push({ op: 'replace', path: `${path}/${escapePathComponent(key)}`, value: jsonCopy(newValue) });
      }
    } else if (Array.isArray(before) === Array.isArray(after)) {
      operations.push({ op: 'remove', path: `${path}/${escapePathComponent(key)}` });
      deleted = true;
    } else {
      operations.push({ op: 'replace', path, value: after });
    }
  }
  if (!deleted && newKeys.length === oldKeys.length) return;
  for (const key of newKeys) {
    if (!Object.hasOwn(before, key) && newRecord[key] !== undefined) operations.push({ op: 'add', path: `${path}/${escapePathComponent(key)}`, value: jsonCopy(newRecord[key]) });
  }
}

function keysOf(value: Container): string[] {
  return Array.isArray(value) ? Array.from({ length: value.length }, (_, i) => String(i)) : Object.keys(value);
}

function escapePathComponent(key: string): string {
  return key.includes('/') || key.includes('~') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

/**
 * What an operation carries: the injected pod's own value (undefined as null, as `compare` does).
 * `compare` copies each value through a JSON round trip; the patch is encoded as JSON at once and
 * the injected pod is not changed after, so sharing gives the same bytes without the copies.
 */
function jsonCopy(value: unknown): unknown {
  return value === undefined ? null : value;
}
