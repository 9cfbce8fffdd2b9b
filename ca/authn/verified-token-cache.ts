import type { Caller } from './authenticator.js';

/**
 * Verdicts of tokens that verified, so a caller presenting the same token again skips the
 * signature check. Only acceptances are kept (a refusal is always re-checked), keyed by the
 * whole token string, so a token differing in any byte (another audience, a forged signature)
 * misses. An entry is used only while all of these hold:
 *   - the clock is before the token's `exp` (the instant the verifier itself would refuse it);
 *   - the key set that verified it is still the one in use (`keySetGeneration` unchanged: any
 *     reload of the key set, changed or not, drops every verdict of the older set);
 *   - the key set is still fresh (`isKeySetFresh`): once the key-set cache would fetch the keys
 *     again, the token goes back to the verifier, which fetches them.
 * Bounded: least recently used entries go first.
 */
export interface VerifiedTokenCache {
  get(token: string, nowMs: number): Caller | undefined;
  /** Keeps `caller` for `token` until `expiresAtMs`, verified with the key set of `keySetGeneration`. */
  set(token: string, caller: Caller, expiresAtMs: number, keySetGeneration: number): void;
  size(): number;
}

export interface VerifiedTokenCacheOptions {
  readonly maxEntries: number;
  /** The key set's reload counter now. */
  readonly keySetGeneration: () => number;
  /** False once the key-set cache considers its keys stale. */
  readonly isKeySetFresh: () => boolean;
}

interface Entry {
  readonly caller: Caller;
  readonly expiresAtMs: number;
  readonly keySetGeneration: number;
}

export function newVerifiedTokenCache(options: VerifiedTokenCacheOptions): VerifiedTokenCache {
  const entries = new Map<string, Entry>();
  return {
    get: (token, nowMs) => {
      const entry = entries.get(token);
      if (entry === undefined) return undefined;
      if (nowMs >= entry.expiresAtMs || entry.keySetGeneration !== options.keySetGeneration() || !options.isKeySetFresh()) {
        entries.delete(token);
        return undefined;
      }
      // Map order is insertion order: re-inserting marks the entry as most recently used.
      entries.delete(token);
      entries.set(token, entry);
      return entry.caller;
    },
    set: (token, caller, expiresAtMs, keySetGeneration) => {
      if (options.maxEntries <= 0) return;
      entries.delete(token);
      while (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      entries.set(token, { caller, expiresAtMs, keySetGeneration });
    },
    size: () => entries.size,
  };
}
