import { describe, expect, test } from '@jest/globals';
import type { ConfigKey } from '../push/push-request.js';
import { newXdsCache } from './xds-cache.js';

function setup(max = 3) {
  const counts = { hit: 0, miss: 0, evicted: 0, size: 0 };
  const cache = newXdsCache<string>(max, {
    read: (result) => counts[result]++,
    evicted: (n) => (counts.evicted += n),
    size: (n) => (counts.size = n),
  });
  return { cache, counts };
}

const key = (name: string): ConfigKey => ({ kind: 'Service', namespace: 'default', name });

describe('newXdsCache', () => {
  test('hits within a version, misses across versions and types', () => {
    const { cache, counts } = setup();
    cache.set('cds', 'v1', 'a', 'A1', [key('a')]);
    expect(cache.get('cds', 'v1', 'a')).toBe('A1');
    expect(cache.get('cds', 'v2', 'a')).toBeUndefined();
    expect(cache.get('eds', 'v1', 'a')).toBeUndefined();
    expect(counts).toMatchObject({ hit: 1, miss: 2, size: 1 });
  });

  test('evicts the least recently used entry beyond the bound', () => {
    const { cache, counts } = setup(2);
    cache.set('cds', 'v1', 'a', 'A', [key('a')]);
    cache.set('cds', 'v1', 'b', 'B', [key('b')]);
    cache.get('cds', 'v1', 'a');
    cache.set('cds', 'v1', 'c', 'C', [key('c')]);
    expect(cache.get('cds', 'v1', 'b')).toBeUndefined();
    expect(cache.get('cds', 'v1', 'a')).toBe('A');
    expect(cache.get('cds', 'v1', 'c')).toBe('C');
    expect(counts).toMatchObject({ evicted: 1, size: 2 });
  });

  test('clearing config keys drops their dependents and the entries that depend on everything', () => {
    const { cache, counts } = setup(10);
    cache.set('eds', 'v1', 'a', 'A', [key('a')]);
    cache.set('eds', 'v1', 'b', 'B', [key('b')]);
    cache.set('eds', 'v1', 'ab', 'AB', [key('a'), key('b')]);
    cache.set('lds', 'v1', 'l', 'L');
    cache.clear([key('a')]);
    expect(cache.get('eds', 'v1', 'a')).toBeUndefined();
    expect(cache.get('eds', 'v1', 'ab')).toBeUndefined();
    expect(cache.get('lds', 'v1', 'l')).toBeUndefined();
    expect(cache.get('eds', 'v1', 'b')).toBe('B');
    expect(counts.size).toBe(1);
  });

  test('clearing with no keys clears everything', () => {
    const { cache } = setup(10);
    cache.set('eds', 'v1', 'a', 'A', [key('a')]);
    cache.clear([]);
    expect(cache.size()).toBe(0);
  });
});
