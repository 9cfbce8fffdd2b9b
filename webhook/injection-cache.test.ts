import { describe, expect, test } from '@jest/globals';
import { newInjectionCache } from './injection-cache.js';

describe('the injection cache', () => {
  test('while lookups miss, it is looked at for a sample of requests only, and kept small', () => {
    const cache = newInjectionCache<string>(1024);
    let looked = 0;
    for (let i = 0; i < 1000; i++) {
      if (!cache.worthLooking()) continue;
      looked++;
      if (cache.get(`pod-${i}`) === undefined) cache.set(`pod-${i}`, 'patch');
    }
    // About a hundred misses bring the hit rate down, then one request in eight is looked at.
    expect(looked).toBeLessThan(250);
    expect(cache.size).toBe(looked);
  });

  test('while cold, a key comes back without its result (only seen), and lookups turn back on: the result is kept again', () => {
    const cache = newInjectionCache<string>(1024);
    for (let i = 0; i < 200; i++) cache.get(`pod-${i}`);
    expect(Array.from({ length: 16 }, () => cache.worthLooking()).filter(Boolean)).toHaveLength(2);
    cache.set('again', 'patch');
    expect(cache.get('again')).toBeUndefined();
    expect(cache.worthLooking()).toBe(true);
    cache.set('again', 'patch');
    expect(cache.get('again')).toBe('patch');
  });

  test('while lookups hit, every request is looked at', () => {
    const cache = newInjectionCache<string>(1024);
    cache.set('pod', 'patch');
    for (let i = 0; i < 1000; i++) {
      expect(cache.worthLooking()).toBe(true);
      expect(cache.get('pod')).toBe('patch');
    }
  });

  test('no capacity, no lookups', () => {
    expect(newInjectionCache<string>(0).worthLooking()).toBe(false);
  });
});
