import { describe, test, expect } from '@jest/globals';
import { parseDurationMs, parseDurationNanos } from './duration.js';

describe('parseDurationNanos', () => {
  test.each([
    ['0', 0n],
    ['0s', 0n],
    ['1s', 1_000_000_000n],
    ['0.5s', 500_000_000n],
    ['.5s', 500_000_000n],
    ['100ms', 100_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['1m0.25s', 60_250_000_000n],
    ['250us', 250_000n],
    ['250µs', 250_000n],
    ['7ns', 7n],
    ['1.0000000001s', 1_000_000_000n],
  ])('%s is %p ns', (text, nanos) => {
    expect(parseDurationNanos(text)).toBe(nanos);
  });

  test.each(['', '1', '10 s', '1S', '-1s', 's', '1d', '1.5', 'PT1S', '1s '])('rejects %p', (text) => {
    expect(parseDurationNanos(text)).toBeUndefined();
  });

  test('milliseconds for callers that build config', () => {
    expect(parseDurationMs('1.5s')).toBe(1500);
    expect(parseDurationMs('250us')).toBe(0.25);
    expect(parseDurationMs('soon')).toBeUndefined();
  });
});
