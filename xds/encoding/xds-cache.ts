import { formatConfigKey } from '../../names/index.js';
import type { ConfigKey } from '../push/push-request.js';

/** Counts the cache reports; wired to xds_cache_reads, xds_cache_evictions and xds_cache_size. */
export interface XdsCacheMetrics {
  read(result: 'hit' | 'miss'): void;
  evicted(count: number): void;
  size(entries: number): void;
}

export interface XdsCache<V> {
  get(typeUrl: string, version: string, cacheKey: string): V | undefined;
  /** `dependsOn` absent means "depends on everything": any clear drops it. */
  set(typeUrl: string, version: string, cacheKey: string, value: V, dependsOn?: readonly ConfigKey[]): void;
  /** Drops the entries that depend on any of `keys` (all entries when `keys` is empty). */
  clear(keys: readonly ConfigKey[]): void;
  clearAll(): void;
  size(): number;
}

interface Entry<V> {
  value: V;
  dependsOn: readonly string[] | undefined;
}

/**
 * The cache of encoded resources shared across proxies: an LRU bounded by `maxEntries`
 * (PILOT_XDS_CACHE_SIZE) keyed by type, push version and the generator's cache key, with an
 * index from config key to the entries depending on it.
 */
export function newXdsCache<V>(maxEntries: number, metrics: XdsCacheMetrics): XdsCache<V> {
  // A Map iterates in insertion order: re-inserting on a hit keeps the least recent first.
  const entries = new Map<string, Entry<V>>();
  const byConfig = new Map<string, Set<string>>();
  const dependsOnAll = new Set<string>();

  const forget = (key: string, entry: Entry<V>): void => {
    entries.delete(key);
    if (entry.dependsOn === undefined) dependsOnAll.delete(key);
    else {
      for (const config of entry.dependsOn) {
        const set = byConfig.get(config);
        set?.delete(key);
        if (set?.size === 0) byConfig.delete(config);
      }
    }
  };

  const report = (): void => metrics.size(entries.size);

  return {
    get(typeUrl, version, cacheKey) {
      const key = `${typeUrl}\n${version}\n${cacheKey}`;
      const entry = entries.get(key);
      if (!entry) {
        metrics.read('miss');
        return undefined;
      }
      entries.delete(key);
      entries.set(key, entry);
      metrics.read('hit');
      return entry.value;
    },
    set(typeUrl, version, cacheKey, value, dependsOn) {
      const key = `${typeUrl}\n${version}\n${cacheKey}`;
      const previous = entries.get(key);
      if (previous) forget(key, previous);
      const entry: Entry<V> = { value, dependsOn: dependsOn?.map(formatConfigKey) };
      entries.set(key, entry);
      if (entry.dependsOn === undefined) dependsOnAll.add(key);
      else {
        for (const config of entry.dependsOn) {
          let set = byConfig.get(config);
          if (!set) byConfig.set(config, (set = new Set()));
          set.add(key);
        }
      }
      let evicted = 0;
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        forget(oldest.value, entries.get(oldest.value) as Entry<V>);
        evicted++;
      }
      if (evicted > 0) metrics.evicted(evicted);
      report();
    },
    clear(keys) {
      if (keys.length === 0) {
        this.clearAll();
        return;
      }
      const doomed = new Set(dependsOnAll);
      for (const key of keys) for (const entryKey of byConfig.get(formatConfigKey(key)) ?? []) doomed.add(entryKey);
      for (const entryKey of doomed) {
        const entry = entries.get(entryKey);
        if (entry) forget(entryKey, entry);
      }
      report();
    },
    clearAll() {
      entries.clear();
      byConfig.clear();
      dependsOnAll.clear();
      report();
    },
    size: () => entries.size,
  };
}
