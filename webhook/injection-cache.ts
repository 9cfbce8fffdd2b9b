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
 *
 * Pods that differ (a StatefulSet's, pods of many workloads) never come back: the key and the
 * kept results are then only a cost (the results fill the old generation for nothing). While
 * lookups hardly ever hit, `worthLooking` says yes for one request in SAMPLE_EVERY only, and what
 * those keep is the key alone (a mark that the inputs were seen): one of them seen again turns
 * lookups back on, and its result is computed once more and kept.
 */
export interface InjectionCache<T> {
  /** Whether to compute the key, look it up and keep the result, for this request. */
  worthLooking(): boolean;
  get(key: string): T | undefined;
  set(key: string, value: T): void;
  clear(): void;
  readonly size: number;
}

/** The hit rate is a moving average over about this many lookups. */
const RATE_WINDOW = 32;
const COLD_HIT_RATE = 0.05;
const SAMPLE_EVERY = 8;

/** What a key maps to while the cache is cold: seen, its result not kept. */
const SEEN = Symbol('seen');

export function newInjectionCache<T>(capacity: number): InjectionCache<T> {
  const entries = new Map<string, T | typeof SEEN>();
  let hitRate = 1;
  let skipped = 0;
  return {
    worthLooking() {
      return capacity > 0 && (hitRate >= COLD_HIT_RATE || skipped++ % SAMPLE_EVERY === 0);
    },
    get(key) {
      const value = entries.get(key);
      // A hit while cold turns lookups back on at once: a ReplicaSet scaling up among distinct pods.
      hitRate = value === undefined ? hitRate - hitRate / RATE_WINDOW : Math.max(hitRate + (1 - hitRate) / RATE_WINDOW, COLD_HIT_RATE);
      if (value === undefined || value === SEEN) return undefined;
      // Re-inserting makes it the most recently used: a Map iterates in insertion order.
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      if (capacity <= 0) return;
      entries.delete(key);
      entries.set(key, hitRate >= COLD_HIT_RATE ? value : SEEN);
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
