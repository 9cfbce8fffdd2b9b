import { createHash } from 'node:crypto';

/** The injection inputs a patch depends on beyond the injector itself and the mesh config. */
export interface InjectionInputs {
  /** The pod exactly as the request sent it. */
  readonly pod: unknown;
  readonly namespace: string;
  /** The URL path, which may carry extra proxy env. */
  readonly path: string;
}

/**
 * A sha256 of the pod's JSON as sent (field order included: the same pod serialised in another
 * order is only a miss, never a wrong answer), the namespace and the path.
 */
export function injectionCacheKey(inputs: InjectionInputs): string {
  return createHash('sha256')
    .update(JSON.stringify([inputs.namespace, inputs.path, inputs.pod]))
    .digest('base64');
}

/**
 * Results already computed, by the key of their inputs: a ReplicaSet's pods (one template, no
 * name yet) ask for the same patch over and over. Bounded, least recently used first out. The
 * owner clears it whenever what is not in the key (the injector, the mesh config) changes.
 */
export interface InjectionCache<T> {
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  clear(): void;
  readonly size: number;
}

export function newInjectionCache<T>(capacity: number): InjectionCache<T> {
  const entries = new Map<string, T>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      // Re-inserting makes it the most recently used: a Map iterates in insertion order.
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      if (capacity <= 0) return;
      entries.delete(key);
      entries.set(key, value);
      for (const oldest of entries.keys()) {
        if (entries.size <= capacity) break;
        entries.delete(oldest);
      }
    },
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
