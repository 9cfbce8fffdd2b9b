/** Lists shorter than this are not worth sharing. */
const MIN_SHARED_LENGTH = 64;
/** Distinct lists kept; the oldest is forgotten first. */
const MAX_LISTS = 256;

/**
 * One frozen array per distinct large subscription: the sidecars of a namespace subscribe to the
 * same thousand EDS names, and what is derived from a list (the EDS generator's index of it by
 * host) is then derived once for all of them, and held once.
 */
export class SharedNameLists {
  private readonly lists = new Map<string, readonly string[]>();

  share(names: readonly string[]): readonly string[] {
    if (names.length < MIN_SHARED_LENGTH) return names;
    const key = `${names.length}\n${names[0]}\n${names[names.length >> 1]}\n${names[names.length - 1]}`;
    const known = this.lists.get(key);
    if (known === names) return known;
    if (known && sameNames(known, names)) return known;
    const shared = Object.isFrozen(names) ? names : Object.freeze([...names]);
    this.lists.delete(key);
    this.lists.set(key, shared);
    if (this.lists.size > MAX_LISTS) this.lists.delete(this.lists.keys().next().value as string);
    return shared;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
