import { describe, expect, test } from '@jest/globals';
import { newVerifiedTokenCache } from './verified-token-cache.js';
import type { Caller } from './authenticator.js';

const caller = (name: string): Caller => ({ identities: [`spiffe://cluster.local/ns/a/sa/${name}`], authenticator: 'oidc-jwt' });

describe('the verified-token cache', () => {
  const setup = (maxEntries = 3) => {
    const keySet = { generation: 1, fresh: true };
    const cache = newVerifiedTokenCache({ maxEntries, keySetGeneration: () => keySet.generation, isKeySetFresh: () => keySet.fresh });
    return { keySet, cache };
  };

  test('answers until the expiry, never at or after it', () => {
    const { cache } = setup();
    cache.set('t', caller('a'), 10_000, 1);
    expect(cache.get('t', 9_999)).toEqual(caller('a'));
    expect(cache.get('t', 10_000)).toBeUndefined();
    // Once refused for expiry the entry is gone, even if the clock went back.
    expect(cache.get('t', 0)).toBeUndefined();
  });

  test('a verdict of an older key set, or of a stale one, is not used', () => {
    const { keySet, cache } = setup();
    cache.set('old', caller('a'), 10_000, 1);
    keySet.generation = 2;
    expect(cache.get('old', 0)).toBeUndefined();
    cache.set('new', caller('b'), 10_000, 2);
    keySet.fresh = false;
    expect(cache.get('new', 0)).toBeUndefined();
    keySet.fresh = true;
    expect(cache.get('new', 0)).toBeUndefined();
  });

  test('holds at most maxEntries, dropping the least recently used', () => {
    const { cache } = setup(2);
    cache.set('a', caller('a'), 10_000, 1);
    cache.set('b', caller('b'), 10_000, 1);
    expect(cache.get('a', 0)).toBeDefined();
    cache.set('c', caller('c'), 10_000, 1);
    expect(cache.size()).toBe(2);
    expect(cache.get('b', 0)).toBeUndefined();
    expect(cache.get('a', 0)).toBeDefined();
    expect(cache.get('c', 0)).toBeDefined();
  });

  test('a size of 0 keeps nothing', () => {
    const { cache } = setup(0);
    cache.set('a', caller('a'), 10_000, 1);
    expect(cache.get('a', 0)).toBeUndefined();
  });
});
