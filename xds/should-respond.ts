import { isWildcardType, warmingDependencies } from './envoy/type-urls.js';
import { newWatchState, sortedUnique, type WatchState, type Watches } from './watch-state.js';

/** The fields of a DiscoveryRequest the decision reads. */
export interface SotwRequestView {
  readonly type_url: string;
  readonly version_info?: string | null;
  readonly response_nonce?: string | null;
  readonly resource_names?: readonly string[] | null;
  readonly error_detail?: { readonly code?: number | null; readonly message?: string | null } | null;
}

/**
 * How the request's `resource_names` came on the wire, as the request handler finds them before
 * the decision: their encoding when the decoder kept it, and whether it is byte for byte the one
 * the watch last had (an ACK repeating its subscription, whose names need not even be decoded).
 */
export interface SotwNamesOnTheWire {
  readonly encoded?: Buffer;
  readonly repeatsWatch: boolean;
}

const NOT_KEPT: SotwNamesOnTheWire = { repeatsWatch: false };

/** The fields of a DeltaDiscoveryRequest the decision reads. */
export interface DeltaRequestView {
  readonly type_url: string;
  readonly response_nonce?: string | null;
  readonly resource_names_subscribe?: readonly string[] | null;
  readonly resource_names_unsubscribe?: readonly string[] | null;
  readonly initial_resource_versions?: Readonly<Record<string, string>> | null;
  readonly error_detail?: { readonly code?: number | null; readonly message?: string | null } | null;
}

/**
 * - `init`: first request of the type (or a reconnect): respond with everything subscribed.
 * - `ack`: the nonce matches the last response and nothing changed: record it, no response.
 * - `nack`: error_detail set: record the error, no response (the proxy keeps its last good config).
 * - `stale`: the nonce is not the last one sent: ignore.
 * - `unsubscribe`: no names left on a non-wildcard type: forget the type.
 * - `subscription-change`: names were added or removed.
 * - `force`: an ACK answered anyway so that the proxy can finish warming.
 */
export type RequestEvent = 'init' | 'ack' | 'nack' | 'stale' | 'unsubscribe' | 'subscription-change' | 'force';

export interface RequestDecision {
  readonly event: RequestEvent;
  readonly respond: boolean;
  /** The stream's watches after the request. */
  readonly watches: Watches;
  /** When set, the response covers only these newly subscribed names; otherwise all subscribed names. */
  readonly subscribed?: readonly string[];
  /** Names the request dropped from the subscription. */
  readonly unsubscribed?: readonly string[];
  /** The NACK's message. */
  readonly error?: string;
}

/** The reference's `ShouldRespond` for state-of-the-world streams, as a pure function. */
export function decideSotw(watches: Watches, request: SotwRequestView, wire: SotwNamesOnTheWire = NOT_KEPT): RequestDecision {
  const typeUrl = request.type_url;
  const previous = watches.get(typeUrl);
  if (request.error_detail) return nack(watches, previous, request.error_detail.message ?? '');

  // An ACK repeats the subscription: the watch's own list is kept (the same array), so that what
  // is derived from it per subscription stays valid.
  const encoded = wire.encoded;
  const sameRequest = previous !== undefined && wire.repeatsWatch;
  const requested = sameRequest ? [] : (request.resource_names ?? []);
  const names =
    sameRequest || (previous && sameNames(requested, previous.names))
      ? (previous as WatchState).names
      : sortedUnique(requested.includes('*') ? requested.filter((name) => name !== '*') : requested);
  const wildcard = sameRequest ? (previous as WatchState).wildcard : isWildcardType(typeUrl) && (names.length === 0 || requested.includes('*'));
  const namesEncoded = encoded !== undefined ? { namesEncoded: encoded } : {};
  if (names.length === 0 && !isWildcardType(typeUrl)) {
    if (!previous) return { event: 'unsubscribe', respond: false, watches };
    const next = new Map(watches);
    next.delete(typeUrl);
    return { event: 'unsubscribe', respond: false, watches: next, unsubscribed: previous.names };
  }

  const nonce = request.response_nonce ?? '';
  if (nonce === '' || !previous) {
    return { event: 'init', respond: true, watches: withNewWatch(watches, { ...newWatchState(typeUrl, names, wildcard), ...namesEncoded }) };
  }
  if (nonce !== previous.nonceSent) return { event: 'stale', respond: false, watches };

  // Built field by field: an object rest over the watch takes the runtime's slow path (bench/README.md,
  // xDS). The same names keep the encoding already held (long-lived), so that the ACK's own bytes
  // die young.
  const keptEncoding = sameRequest ? previous.namesEncoded : encoded;
  const acked: WatchState = {
    typeUrl: previous.typeUrl,
    names,
    wildcard,
    ...(keptEncoding !== undefined ? { namesEncoded: keptEncoding } : {}),
    nonceSent: previous.nonceSent,
    versionSent: previous.versionSent,
    nonceAcked: nonce,
    versionAcked: request.version_info ?? '',
    lastError: '',
    alwaysRespond: false,
  };
  const next = new Map(watches).set(typeUrl, acked);
  const added = difference(names, previous.names);
  const removed = difference(previous.names, names);
  if (previous.alwaysRespond) return { event: 'force', respond: true, watches: next };
  if (added.length === 0 && removed.length === 0 && wildcard === previous.wildcard) {
    return { event: 'ack', respond: false, watches: next };
  }
  // Dropped names need no response; a wildcard type is answered in full, others with the new names only.
  if (isWildcardType(typeUrl)) {
    return { event: 'subscription-change', respond: added.length > 0 || wildcard !== previous.wildcard, watches: next, unsubscribed: removed };
  }
  return { event: 'subscription-change', respond: added.length > 0, watches: next, subscribed: added, unsubscribed: removed };
}

/** The reference's `shouldRespondDelta`, as a pure function. */
export function decideDelta(watches: Watches, request: DeltaRequestView): RequestDecision {
  const typeUrl = request.type_url;
  const previous = watches.get(typeUrl);
  if (request.error_detail) return nack(watches, previous, request.error_detail.message ?? '');

  const subscribe = request.resource_names_subscribe ?? [];
  const unsubscribe = request.resource_names_unsubscribe ?? [];
  if (!previous) {
    const versions = Object.keys(request.initial_resource_versions ?? {});
    if (unsubscribe.length === 0 && versions.length === 0 && !subscribe.includes('*')) {
      // The common first request: its names as they are (a shared list stays shared), sorted if they are not.
      const wildcard = isWildcardType(typeUrl) && subscribe.length === 0;
      return { event: 'init', respond: true, watches: withNewWatch(watches, newWatchState(typeUrl, subscribe, wildcard)) };
    }
    const names = new Set([...subscribe, ...versions]);
    for (const name of unsubscribe) names.delete(name);
    const explicitWildcard = names.delete('*');
    // Envoy's legacy wildcard: the first request of a wildcard type names nothing.
    const wildcard = isWildcardType(typeUrl) && (explicitWildcard || subscribe.length === 0);
    return { event: 'init', respond: true, watches: withNewWatch(watches, newWatchState(typeUrl, [...names], wildcard)) };
  }

  const nonce = request.response_nonce ?? '';
  if (nonce !== '' && nonce !== previous.nonceSent) return { event: 'stale', respond: false, watches };
  const acked = nonce !== '' ? { nonceAcked: nonce, versionAcked: previous.versionSent } : {};

  if (subscribe.length === 0 && unsubscribe.length === 0) {
    // A plain ACK (the common request): the subscription stands, nothing to compare. Built field
    // by field, as an ACK of state of the world is (an object spread takes V8's slow path).
    const next = new Map(watches).set(typeUrl, {
      typeUrl: previous.typeUrl,
      names: previous.names,
      wildcard: previous.wildcard,
      ...(previous.namesEncoded !== undefined ? { namesEncoded: previous.namesEncoded } : {}),
      nonceSent: previous.nonceSent,
      versionSent: previous.versionSent,
      nonceAcked: nonce !== '' ? nonce : previous.nonceAcked,
      versionAcked: nonce !== '' ? previous.versionSent : previous.versionAcked,
      lastError: '',
      alwaysRespond: false,
    });
    return { event: previous.alwaysRespond ? 'force' : 'ack', respond: previous.alwaysRespond, watches: next };
  }
  const names = new Set(previous.names);
  let wildcard = previous.wildcard;
  for (const name of subscribe) {
    if (name === '*') wildcard = isWildcardType(typeUrl);
    else names.add(name);
  }
  for (const name of unsubscribe) {
    if (name === '*') wildcard = false;
    else names.delete(name);
  }
  const current = sortedUnique(names);
  const added = difference(current, previous.names);
  const removed = difference(previous.names, current);
  const next = new Map(watches).set(typeUrl, {
    ...previous,
    names: current,
    wildcard,
    lastError: '',
    ...acked,
    alwaysRespond: false,
  });
  const wildcardAdded = wildcard && !previous.wildcard;
  if (added.length === 0 && removed.length === 0 && !wildcardAdded && wildcard === previous.wildcard) {
    if (previous.alwaysRespond) return { event: 'force', respond: true, watches: next };
    return { event: 'ack', respond: false, watches: next };
  }
  return {
    event: 'subscription-change',
    respond: added.length > 0 || wildcardAdded,
    watches: next,
    ...(wildcardAdded ? {} : { subscribed: added }),
    unsubscribed: removed,
  };
}

function nack(watches: Watches, previous: WatchState | undefined, message: string): RequestDecision {
  const error = message || 'rejected without a message';
  if (!previous) return { event: 'nack', respond: false, watches, error };
  return { event: 'nack', respond: false, watches: new Map(watches).set(previous.typeUrl, { ...previous, lastError: error }), error };
}

/** A new watch; the dependent types already watched answer their next ACK so that warming completes. */
function withNewWatch(watches: Watches, state: WatchState): Watches {
  const next = new Map(watches).set(state.typeUrl, state);
  for (const dependent of warmingDependencies(state.typeUrl)) {
    const watch = next.get(dependent);
    if (watch) next.set(dependent, { ...watch, alwaysRespond: true });
  }
  return next;
}

/** The request names exactly the watch's sorted names, in order (`*` is never among them). */
function sameNames(requested: readonly string[], watched: readonly string[]): boolean {
  if (requested.length !== watched.length) return false;
  for (let i = 0; i < requested.length; i++) if (requested[i] !== watched[i]) return false;
  return true;
}

function difference(a: readonly string[], b: readonly string[]): string[] {
  if (a === b || sameNames(a, b)) return [];
  const other = new Set(b);
  return a.filter((name) => !other.has(name));
}
