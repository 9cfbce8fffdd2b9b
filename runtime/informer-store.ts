import { formatObjectKey } from '../names/index.js';
import { objectKeyOf } from './source.js';
import type { KubeObject, ObjectKey, SourceEvent, Store } from './source.js';

/**
 * The writer side of a source's store. Each write returns the events it implies, so the
 * source can notify subscribers after the store already shows the new state.
 */
export interface InformerStore<T extends KubeObject> extends Store<T> {
  /** An add or update; no event when the stored copy has the same resourceVersion. */
  apply(object: T): SourceEvent<T> | undefined;
  /** No event when the object was not stored. The event carries `object` (the final state). */
  delete(object: T): SourceEvent<T> | undefined;
  /**
   * Swaps in the result of a full list at once (kube-rs reflector: init, buffer, init-done):
   * `apply` for each new or changed object, one `delete` (with the last known copy) for each
   * object that is gone, nothing for unchanged ones.
   */
  replace(objects: readonly T[]): SourceEvent<T>[];
}

export function newInformerStore<T extends KubeObject>(): InformerStore<T> {
  let objects = new Map<string, T>();
  return {
    get(key: ObjectKey): T | undefined {
      return objects.get(formatObjectKey(key));
    },

    list(): T[] {
      return [...objects.values()];
    },

    apply(object: T): SourceEvent<T> | undefined {
      const key = keyOf(object);
      if (isSameVersion(objects.get(key), object)) return undefined;
      objects.set(key, object);
      return { type: 'apply', object };
    },

    delete(object: T): SourceEvent<T> | undefined {
      if (!objects.delete(keyOf(object))) return undefined;
      return { type: 'delete', object };
    },

    replace(listed: readonly T[]): SourceEvent<T>[] {
      const next = new Map<string, T>();
      for (const object of listed) next.set(keyOf(object), object);
      const events: SourceEvent<T>[] = [];
      for (const [key, object] of next) {
        if (!isSameVersion(objects.get(key), object)) events.push({ type: 'apply', object });
      }
      for (const [key, object] of objects) {
        if (!next.has(key)) events.push({ type: 'delete', object });
      }
      objects = next;
      return events;
    },
  };
}

function keyOf(object: KubeObject): string {
  return formatObjectKey(objectKeyOf(object));
}

function isSameVersion(stored: KubeObject | undefined, object: KubeObject): boolean {
  const version = stored?.metadata?.resourceVersion;
  return version !== undefined && version !== '' && version === object.metadata?.resourceVersion;
}
