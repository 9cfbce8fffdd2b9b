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

/**
 * fast-json-patch's `_generate` without `test` operations: removals and replacements walking the
 * old keys backwards, then additions. Array indices are walked as numbers (the library makes a
 * list of their strings), and a path is written only where the walk goes down: a field that is
 * the same value on both sides (shared, or an equal primitive) is passed over at once.
 */
function diff(before: Container, after: Container, path: string, operations: Operation[]): void {
  if (before === after) return;
  if (typeof (after as { toJSON?: unknown }).toJSON === 'function') after = (after as { toJSON: () => Container }).toJSON();
  const beforeIsArray = Array.isArray(before);
  const afterIsArray = Array.isArray(after);
  const oldKeys = beforeIsArray ? null : Object.keys(before);
  const newKeys = afterIsArray ? null : Object.keys(after);
  const oldCount = oldKeys === null ? (before as unknown[]).length : oldKeys.length;
  const newCount = newKeys === null ? (after as unknown[]).length : newKeys.length;
  const oldRecord = before as Record<PropertyKey, unknown>;
  const newRecord = after as Record<PropertyKey, unknown>;
  let deleted = false;
  for (let i = oldCount - 1; i >= 0; i--) {
    const key = oldKeys === null ? i : (oldKeys[i] as string);
    const oldValue = oldRecord[key];
    if (Object.hasOwn(after, key) && !(newRecord[key] === undefined && oldValue !== undefined && !afterIsArray)) {
      const newValue = newRecord[key];
      if (oldValue === newValue) continue;
      if (
        typeof oldValue === 'object' &&
        oldValue !== null &&
        typeof newValue === 'object' &&
        newValue !== null &&
        Array.isArray(oldValue) === Array.isArray(newValue)
      ) {
        diff(oldValue as Container, newValue as Container, `${path}/${escapePathComponent(String(key))}`, operations);
      } else {
        operations.push({ op: 'replace', path: `${path}/${escapePathComponent(String(key))}`, value: jsonCopy(newValue) });
      }
    } else if (beforeIsArray === afterIsArray) {
      operations.push({ op: 'remove', path: `${path}/${escapePathComponent(String(key))}` });
      deleted = true;
    } else {
      operations.push({ op: 'replace', path, value: after });
    }
  }
  if (!deleted && newCount === oldCount) return;
  for (let i = 0; i < newCount; i++) {
    const key = newKeys === null ? i : (newKeys[i] as string);
    if (!Object.hasOwn(before, key) && newRecord[key] !== undefined)
      operations.push({ op: 'add', path: `${path}/${escapePathComponent(String(key))}`, value: jsonCopy(newRecord[key]) });
  }
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
