import { describe, expect, test } from '@jest/globals';
import { GRACE_RATIO_JITTER, graceRatioJitter, renewalDelayMs } from './renewal-time.js';

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
    const sequence = (values: number[]): (() => number) => () => values.shift() ?? 0;
    expect(graceRatioJitter(sequence([0.5, 0.9]))).toBeCloseTo(0.005);
    expect(graceRatioJitter(sequence([0.5, 0.5]))).toBe(0);
    expect(graceRatioJitter(sequence([0.5, 0.1]))).toBeCloseTo(-0.005);
  });
});
