import { describe, expect, test } from '@jest/globals';
import { newRestartBackoff } from './restart-backoff.js';

describe('newRestartBackoff', () => {
  test('grows by the factor up to the cap and starts again after reset', () => {
    const backoff = newRestartBackoff({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0 });
    expect([1, 2, 3, 4, 5, 6].map(() => backoff.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
    backoff.reset();
    expect(backoff.next()).toBe(100);
  });

  test.each([
    [0, 100],
    [0.5, 150],
    [0.999, 200],
  ])('jitter adds up to jitter × delay (random %p → %p ms)', (random, expected) => {
    const backoff = newRestartBackoff({ initialMs: 100, maxMs: 10_000, jitter: 1 }, () => random);
    expect(backoff.next()).toBe(expected);
  });

  test('jitter never pushes a delay past the cap', () => {
    const backoff = newRestartBackoff({ initialMs: 800, maxMs: 1000, jitter: 1 }, () => 0.99);
    expect(backoff.next()).toBe(1000);
  });

  test('defaults are client-go reflector values: 800 ms doubling to 30 s', () => {
    const backoff = newRestartBackoff({ jitter: 0 });
    const delays = Array.from({ length: 8 }, () => backoff.next());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });
});
