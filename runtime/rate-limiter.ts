import type { Clock } from './clock.js';

/**
 * How long a key waits before it is retried (client-go's workqueue rate limiters). `when`
 * records a failure and returns the delay; `forget` clears the key's history.
 */
export interface RateLimiter<K> {
  /** Delay in milliseconds before the key may be processed again; counts a requeue. */
  when(key: K): number;
  /** Stops tracking the key (it succeeded, or it will never be retried). */
  forget(key: K): void;
  /** How many times the key has been requeued since the last forget. */
  numRequeues(key: K): number;
}

export interface ExponentialFailureOptions<K> {
  /** Delay after the first failure; doubles with each further failure. Default 5 ms. */
  baseDelayMs?: number;
  /** Cap on the delay. Default 1000 s. */
  maxDelayMs?: number;
  /** Identity of a key; default `String(key)`, or JSON for objects. */
  keyOf?: (key: K) => string;
}

/** Per-key exponential backoff: base * 2^failures, capped at max. */
export function newExponentialFailureRateLimiter<K>(options: ExponentialFailureOptions<K> = {}): RateLimiter<K> {
  const baseDelayMs = options.baseDelayMs ?? 5;
  const maxDelayMs = options.maxDelayMs ?? 1_000_000;
  const keyOf = options.keyOf ?? defaultKeyOf;
  const failures = new Map<string, number>();
  return {
    when(key) {
      const id = keyOf(key);
      const exponent = failures.get(id) ?? 0;
      failures.set(id, exponent + 1);
      const delay = baseDelayMs * 2 ** exponent;
      return Number.isFinite(delay) && delay < maxDelayMs ? delay : maxDelayMs;
    },
    forget(key) {
      failures.delete(keyOf(key));
    },
    numRequeues(key) {
      return failures.get(keyOf(key)) ?? 0;
    },
  };
}

export interface TokenBucketOptions {
  clock: Clock;
  /** Tokens added per second. Default 10. */
  qps?: number;
  /** Bucket size: how many keys pass at once before the rate applies. Default 100. */
  burst?: number;
}

/**
 * An overall rate limit shared by every key (golang.org/x/time/rate's reservation): each call
 * takes a token, and once the bucket is empty the delay grows by 1/qps per call.
 */
export function newTokenBucketRateLimiter<K>(options: TokenBucketOptions): RateLimiter<K> {
  const { clock } = options;
  const qps = options.qps ?? 10;
  const burst = options.burst ?? 100;
  let tokens = burst;
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      if (now > last) {
        tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
        last = now;
      }
      tokens -= 1;
      return tokens >= 0 ? 0 : Math.ceil((-tokens / qps) * 1000);
    },
    forget() {},
    numRequeues() {
      return 0;
    },
  };
}

/** The worst (longest) delay of several limiters; every limiter records every call. */
export function newMaxOfRateLimiter<K>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  return {
    when(key) {
      let delay = 0;
      for (const limiter of limiters) delay = Math.max(delay, limiter.when(key));
      return delay;
    },
    forget(key) {
      for (const limiter of limiters) limiter.forget(key);
    },
    numRequeues(key) {
      let count = 0;
      for (const limiter of limiters) count = Math.max(count, limiter.numRequeues(key));
      return count;
    },
  };
}

/** client-go's default controller limiter: max of 5 ms..1000 s per key and 10 qps / burst 100 overall. */
export function newDefaultControllerRateLimiter<K>(clock: Clock, keyOf?: (key: K) => string): RateLimiter<K> {
  return newMaxOfRateLimiter<K>(
    newExponentialFailureRateLimiter<K>({ baseDelayMs: 5, maxDelayMs: 1_000_000, ...(keyOf ? { keyOf } : {}) }),
    newTokenBucketRateLimiter<K>({ clock, qps: 10, burst: 100 }),
  );
}

/**
 * Identity of a key: strings as they are; flat objects (an ObjectKey) as JSON with sorted
 * fields, so `{name, namespace}` and `{namespace, name}` are the same key.
 */
export function defaultKeyOf(key: unknown): string {
  if (typeof key === 'string') return key;
  if (key !== null && typeof key === 'object') return JSON.stringify(key, Object.keys(key).sort());
  return String(key);
}
