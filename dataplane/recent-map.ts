/**
 * The entry of `key`, made by `create` when absent, kept among the `max` most recently used;
 * the least recently used beyond that is dropped and handed to `evict` (closed, destroyed).
 * A Map keeps insertion order, so re-inserting on use keeps the oldest first.
 */
export function recentEntry<V>(entries: Map<string, V>, key: string, max: number, create: () => V, evict: (value: V) => void): V {
  let value = entries.get(key);
  if (value !== undefined) entries.delete(key);
  else value = create();
  entries.set(key, value);
  if (entries.size > max) {
    const [oldest, evicted] = entries.entries().next().value as [string, V];
    entries.delete(oldest);
    evict(evicted);
  }
  return value;
}
