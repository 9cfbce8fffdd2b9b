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
