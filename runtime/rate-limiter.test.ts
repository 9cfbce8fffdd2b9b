import { describe, expect, test } from '@jest/globals';
import { FakeClock } from './testing/fake-clock.js';
import {
  defaultKeyOf,
  newDefaultControllerRateLimiter,
  newExponentialFailureRateLimiter,
  newMaxOfRateLimiter,
  newTokenBucketRateLimiter,
} from './rate-limiter.js';

describe('exponential failure rate limiter', () => {
  test.each([
    { name: 'client-go defaults', base: undefined, max: undefined, calls: 5, delays: [5, 10, 20, 40, 80] },
    { name: 'capped at max', base: 100, max: 500, calls: 5, delays: [100, 200, 400, 500, 500] },
    // 5 ms * 2^17 = 655 s; the next doubling passes 1000 s.
    { name: 'default max of 1000 s', base: 5, max: undefined, calls: 20, delays: [...Array.from({ length: 18 }, (_, n) => 5 * 2 ** n), 1_000_000, 1_000_000] },
  ])('$name', ({ base, max, calls, delays }) => {
    const limiter = newExponentialFailureRateLimiter<string>({
      ...(base !== undefined ? { baseDelayMs: base } : {}),
      ...(max !== undefined ? { maxDelayMs: max } : {}),
    });
    const seen = Array.from({ length: calls }, () => limiter.when('a'));
    expect(seen).toEqual(delays);
    expect(limiter.numRequeues('a')).toBe(calls);
  });

  test('keys back off independently and forget resets one key', () => {
    const limiter = newExponentialFailureRateLimiter<string>();
    expect([limiter.when('a'), limiter.when('a'), limiter.when('b')]).toEqual([5, 10, 5]);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.numRequeues('b')).toBe(1);
    expect(limiter.when('a')).toBe(5);
  });

  test('object keys compare by value, whatever the field order', () => {
    const limiter = newExponentialFailureRateLimiter<{ namespace: string; name: string }>();
    limiter.when({ namespace: 'ns', name: 'a' });
    expect(limiter.when({ name: 'a', namespace: 'ns' } as { namespace: string; name: string })).toBe(10);
    expect(defaultKeyOf({ name: 'a', namespace: 'ns' })).toBe(defaultKeyOf({ namespace: 'ns', name: 'a' }));
  });
});

describe('token bucket rate limiter', () => {
  test('the burst passes at once, then each call waits 1/qps more', () => {
    const clock = new FakeClock();
    const limiter = newTokenBucketRateLimiter<string>({ clock, qps: 10, burst: 3 });
    expect([1, 2, 3, 4, 5].map((n) => limiter.when(`k${n}`))).toEqual([0, 0, 0, 100, 200]);
    expect(limiter.numRequeues('k1')).toBe(0);
  });

  test('tokens refill with time, never beyond the burst', () => {
    const clock = new FakeClock();
    const limiter = newTokenBucketRateLimiter<string>({ clock, qps: 10, burst: 2 });
    expect([limiter.when('a'), limiter.when('a')]).toEqual([0, 0]);
    clock.advance(100);
    expect(limiter.when('a')).toBe(0);
    expect(limiter.when('a')).toBe(100);
    clock.advance(60_000);
    expect([limiter.when('a'), limiter.when('a'), limiter.when('a')]).toEqual([0, 0, 100]);
  });
});

describe('max-of and the default controller rate limiter', () => {
  test('max-of returns the longest delay and forgets in every limiter', () => {
    const clock = new FakeClock();
    const limiter = newMaxOfRateLimiter<string>(newExponentialFailureRateLimiter({ baseDelayMs: 1 }), newTokenBucketRateLimiter({ clock, qps: 1, burst: 1 }));
    expect(limiter.when('a')).toBe(1);
    expect(limiter.when('a')).toBe(1000);
    expect(limiter.numRequeues('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
  });

  test('default: 5 ms per key until 100 keys have passed, then 10 qps overall', () => {
    const clock = new FakeClock();
    const limiter = newDefaultControllerRateLimiter<string>(clock);
    const first = Array.from({ length: 100 }, (_, n) => limiter.when(`key-${n}`));
    expect(new Set(first)).toEqual(new Set([5]));
    expect(limiter.when('key-100')).toBe(100);
    expect(limiter.when('key-0')).toBe(200);
    expect(limiter.numRequeues('key-0')).toBe(2);
  });
});
