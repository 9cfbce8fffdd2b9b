import { describe, expect, test } from '@jest/globals';
import { EXPIRED_RETRY_MAX_MS, GRACE_RATIO_JITTER, graceRatioJitter, renewalDelayMs, retryDelayMs } from './renewal-time.js';

const HOUR = 3_600_000;

describe('certificate renewal time', () => {
  test('at the grace ratio of the lifetime, counted from when the certificate was obtained', () => {
    expect(renewalDelayMs({ obtainedAtMs: 0, notAfterMs: 24 * HOUR, nowMs: 0, graceRatio: 0.5, jitter: 0 })).toBe(12 * HOUR);
    // Later calls count the same point in time.
    expect(renewalDelayMs({ obtainedAtMs: 0, notAfterMs: 24 * HOUR, nowMs: 2 * HOUR, graceRatio: 0.5, jitter: 0 })).toBe(10 * HOUR);
    expect(renewalDelayMs({ obtainedAtMs: 0, notAfterMs: 24 * HOUR, nowMs: 20 * HOUR, graceRatio: 0.5, jitter: 0 })).toBe(0);
  });

  test('the jitter moves it by at most 1 % of the lifetime, either way, and is spread across its range', () => {
    const draws = Array.from({ length: 3000 }, () => graceRatioJitter());
    expect(Math.max(...draws.map(Math.abs))).toBeLessThanOrEqual(GRACE_RATIO_JITTER);
    expect(draws.filter((d) => d > 0.005).length).toBeGreaterThan(0);
    expect(draws.filter((d) => d < -0.005).length).toBeGreaterThan(0);
    for (const jitter of [-GRACE_RATIO_JITTER, 0, GRACE_RATIO_JITTER]) {
      const at = renewalDelayMs({ obtainedAtMs: 0, notAfterMs: 100 * HOUR, nowMs: 0, graceRatio: 0.5, jitter }) / (100 * HOUR);
      expect(at).toBeGreaterThanOrEqual(0.49 - 1e-9);
      expect(at).toBeLessThanOrEqual(0.51 + 1e-9);
    }
  });

  test('the reference draws: a uniform fraction of the jitter times -1, 0 or +1', () => {
    const sequence =
      (values: number[]): (() => number) =>
      () =>
        values.shift() ?? 0;
    expect(graceRatioJitter(sequence([0.5, 0.9]))).toBeCloseTo(0.005);
    expect(graceRatioJitter(sequence([0.5, 0.5]))).toBe(0);
    expect(graceRatioJitter(sequence([0.5, 0.1]))).toBeCloseTo(-0.005);
  });

  test.each([
    ['backs off from 1 s, doubling', 0, 100_000, 1000],
    ['doubling', 3, 100_000, 8000],
    ['up to 60 s', 10, 10 * HOUR, 60_000],
    ['never past half of the remaining validity', 5, 20_000, 10_000],
    ['close to the expiry still a little apart', 5, 300, 200],
    ['after the expiry at most 5 s', 10, -1, EXPIRED_RETRY_MAX_MS],
    ['after the expiry still backing off from 1 s', 0, -1, 1000],
  ])('a failed renewal is retried: %s', (_case, failures, remainingMs, expected) => {
    expect(retryDelayMs({ failures, nowMs: 1_000_000, notAfterMs: 1_000_000 + remainingMs })).toBe(expected);
  });

  test('without a certificate, plain backoff', () => {
    expect(retryDelayMs({ failures: 2, nowMs: 0, notAfterMs: undefined })).toBe(4000);
  });
});
