/**
 * `key=value` items of a flag such as `--labels app=web,tier=front`, as the reference reads them:
 * split at the first `=`, an item without one a key with an empty value, a later key winning.
 * Sorted by key.
 */
export function keyValueMap(items: readonly string[]): Record<string, string> {
  const entries = new Map(
    items.map((item): [string, string] => {
      const at = item.indexOf('=');
      return at < 0 ? [item, ''] : [item.slice(0, at), item.slice(at + 1)];
    }),
  );
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
