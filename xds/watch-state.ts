/** What a stream knows about one type: subscription, and what was sent and acknowledged. */
export interface WatchState {
  readonly typeUrl: string;
  /** Subscribed resource names, sorted, without `*`. */
  readonly names: readonly string[];
  /** Subscribed to every resource of the type (CDS and LDS without names, or `*`). */
  readonly wildcard: boolean;
  /** Set when `names` is a shared list (`SharedNameLists`): the key every watch with these names has. */
  readonly namesKey?: string;
  /** The request's `resource_names` as encoded on the wire when `names` came from them (large subscriptions only). */
  readonly namesEncoded?: Buffer;
  /** '' until a response was sent. */
  readonly nonceSent: string;
  readonly versionSent: string;
  readonly nonceAcked: string;
  readonly versionAcked: string;
  /** The last NACK's message; '' after an ACK. */
  readonly lastError: string;
  /** Respond to the next ACK anyway, so that the proxy can finish warming (set by a new CDS or LDS watch). */
  readonly alwaysRespond: boolean;
}

export type Watches = ReadonlyMap<string, WatchState>;

/** The names a generator is asked for: none for a wildcard watch (all of the type), else the subscription and its key. */
export function subscriptionOf(watch: WatchState): { readonly names: readonly string[]; readonly namesKey?: string } {
  if (watch.wildcard) return { names: [] };
  return watch.namesKey !== undefined ? { names: watch.names, namesKey: watch.namesKey } : { names: watch.names };
}

export type SyncStatus = 'SYNCED' | 'STALE' | 'NOT_SENT' | 'ERROR';

export function newWatchState(typeUrl: string, names: readonly string[], wildcard: boolean): WatchState {
  return {
    typeUrl,
    names: sortedUnique(names),
    wildcard,
    nonceSent: '',
    versionSent: '',
    nonceAcked: '',
    versionAcked: '',
    lastError: '',
    alwaysRespond: false,
  };
}

/** As the reference's syncz: ERROR on a NACK, NOT_SENT before the first response, SYNCED when the last one was ACKed. */
export function syncStatus(state: WatchState | undefined): SyncStatus {
  if (!state || state.nonceSent === '') return state?.lastError ? 'ERROR' : 'NOT_SENT';
  if (state.lastError !== '') return 'ERROR';
  return state.nonceAcked === state.nonceSent ? 'SYNCED' : 'STALE';
}

export function sortedUnique(names: Iterable<string>): readonly string[] {
  const list = Array.isArray(names) ? (names as string[]) : [...names];
  // Proxies send the same sorted list with every ACK: check before sorting.
  let ordered = true;
  for (let i = 1; i < list.length && ordered; i++) ordered = (list[i - 1] as string) < (list[i] as string);
  // A frozen list (decoded once for every stream that sends the same names) is shared as it is.
  if (ordered) return Object.isFrozen(list) ? list : [...list];
  return [...new Set(list)].sort();
}
