/** Lists shorter than this are not worth sharing. */
const MIN_SHARED_LENGTH = 64;
/** Distinct lists kept; the oldest is forgotten first. */
const MAX_LISTS = 256;

/** A subscription as the request handler records it: the shared names and the key naming them. */
export interface SharedNames {
  readonly names: readonly string[];
  /** Set for a shared list: every list shared under this key has exactly these names. */
  readonly key?: string;
}

/**
 * One frozen array per distinct large subscription, with a key of its own: the sidecars of a
 * namespace subscribe to the same thousand EDS names, and what is derived from a list (the EDS
 * generator's index of it by host, its load assignments) is then derived once for all of them
 * under the key, and held once.
 */
export class SharedNameLists {
  private readonly lists = new Map<string, { readonly names: readonly string[]; readonly key: string }>();
  private counter = 0;

  share(names: readonly string[]): SharedNames {
    if (names.length < MIN_SHARED_LENGTH) return { names };
    const lookup = `${names.length}\n${names[0]}\n${names[names.length >> 1]}\n${names[names.length - 1]}`;
    const known = this.lists.get(lookup);
    if (known && sameNames(known.names, names)) return known;
    const shared = { names: Object.freeze([...names]), key: `names/${++this.counter}` };
    this.lists.delete(lookup);
    this.lists.set(lookup, shared);
    if (this.lists.size > MAX_LISTS) this.lists.delete(this.lists.keys().next().value as string);
    return shared;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
