import { describe, expect, test } from '@jest/globals';
import { MAX_DURATION_MS, MAX_DURATION_NS, formatDuration, formatDurationNs, parseDuration, parseDurationNs } from './duration.js';
import { MeshError } from './errors.js';

const NS = 1n;
const US = 1_000n;
const MS = 1_000_000n;
const S = 1_000_000_000n;
const M = 60n * S;
const H = 60n * M;
const MIN_INT64 = -(1n << 63n);

describe('parseDurationNs', () => {
  // Go's time.ParseDuration test table (time_test.go), valid inputs.
  test.each<[string, bigint]>([
    ['0', 0n],
    ['5s', 5n * S],
    ['30s', 30n * S],
    ['1478s', 1478n * S],
    ['-5s', -5n * S],
    ['+5s', 5n * S],
    ['-0', 0n],
    ['+0', 0n],
    ['5.0s', 5n * S],
    ['5.6s', 5n * S + 600n * MS],
    ['5.s', 5n * S],
    ['.5s', 500n * MS],
    ['1.0s', S],
    ['1.00s', S],
    ['1.004s', S + 4n * MS],
    ['1.0040s', S + 4n * MS],
    ['100.00100s', 100n * S + MS],
    ['10ns', 10n * NS],
    ['11us', 11n * US],
    ['12\u00b5s', 12n * US],
    ['12\u03bcs', 12n * US],
    ['13ms', 13n * MS],
    ['14s', 14n * S],
    ['15m', 15n * M],
    ['16h', 16n * H],
    ['3h30m', 3n * H + 30n * M],
    ['10.5s4m', 4n * M + 10n * S + 500n * MS],
    ['-2m3.4s', -(2n * M + 3n * S + 400n * MS)],
    ['1h2m3s4ms5us6ns', H + 2n * M + 3n * S + 4n * MS + 5n * US + 6n * NS],
    ['39h9m14.425s', 39n * H + 9n * M + 14n * S + 425n * MS],
    ['52763797000ns', 52763797000n],
    ['0.3333333333333333333h', 20n * M],
    ['9007199254740993ns', 9007199254740993n],
    ['9223372036854775807ns', MAX_DURATION_NS],
    ['9223372036854775.807us', MAX_DURATION_NS],
    ['9223372036s854ms775us807ns', MAX_DURATION_NS],
    ['2562047h47m16.854775807s', MAX_DURATION_NS],
    ['-9223372036854775808ns', MIN_INT64],
    ['-9223372036854775.808us', MIN_INT64],
    ['-9223372036s854ms775us808ns', MIN_INT64],
    ['-2562047h47m16.854775808s', MIN_INT64],
    ['0.100000000000000000000h', 6n * M],
    ['0.830103483285477580700h', 49n * M + 48n * S + 372539827n],
    ['1.5h', 90n * M],
    ['1m0s', M],
  ])('%s', (text, want) => {
    expect(parseDurationNs(text)).toBe(want);
  });

  // Go's invalid inputs, plus the brief's examples.
  test.each([
    '',
    '3',
    '10',
    '-',
    's',
    '.',
    '-.',
    '.s',
    '+.s',
    '1d',
    '1x',
    'fast',
    '1 s',
    ' 1s',
    '\u0085\u0085',
    '\ufffd',
    '\ufffd hello \ufffd world',
    '9223372036854775808ns',
    '9223372036854775.808us',
    '9223372036854ms775us808ns',
    '-9223372036854775809ns',
    '-9223372036854775.809us',
    '-9223372036854ms775us809ns',
  ])('rejects %j', (text) => {
    let thrown: unknown;
    try {
      parseDurationNs(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MeshError);
    expect((thrown as MeshError).code).toBe('invalid-duration');
    expect((thrown as MeshError).message).toContain(JSON.stringify(text));
  });

  test('messages say what is wrong, as Go does', () => {
    expect(() => parseDuration('fast')).toThrow('invalid duration "fast"');
    expect(() => parseDuration('10')).toThrow('missing unit in duration "10"');
    expect(() => parseDuration('1x')).toThrow('unknown unit "x" in duration "1x"');
    expect(() => parseDuration('')).toThrow('invalid duration ""');
  });
});

describe('formatDurationNs', () => {
  // Go's Duration.String test table, plus the values of the seeds.
  test.each<[bigint, string]>([
    [0n, '0s'],
    [1n, '1ns'],
    [1100n, '1.1\u00b5s'],
    [2200n * US, '2.2ms'],
    [3300n * MS, '3.3s'],
    [4n * M + 5n * S, '4m5s'],
    [4n * M + 5001n * MS, '4m5.001s'],
    [5n * H + 6n * M + 7001n * MS, '5h6m7.001s'],
    [8n * M + 1n, '8m0.000000001s'],
    [MAX_DURATION_NS, '2562047h47m16.854775807s'],
    [MIN_INT64, '-2562047h47m16.854775808s'],
    [-3n * S, '-3s'],
    [-1500n, '-1.5\u00b5s'],
    [999n, '999ns'],
    [S, '1s'],
    [M, '1m0s'],
    [H, '1h0m0s'],
    [24n * H, '24h0m0s'],
    [87600n * H, '87600h0m0s'],
    [2160n * H, '2160h0m0s'],
    [20n * M, '20m0s'],
    [MAX_DURATION_NS + 1n, '2562047h47m16.854775807s'],
  ])('%s ns', (ns, want) => {
    expect(formatDurationNs(ns)).toBe(want);
  });
});

describe('milliseconds', () => {
  test.each<[string, number]>([
    ['100ms', 100],
    ['1m0s', 60_000],
    ['1.5h', 5_400_000],
    ['0', 0],
    ['0s', 0],
    ['-3s', -3000],
    ['1.5\u00b5s', 0.0015],
    ['1ns', 0.000001],
    ['24h0m0s', 86_400_000],
  ])('parseDuration(%j) is %s ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 12);
  });

  test.each<[number, string]>([
    [0, '0s'],
    [100, '100ms'],
    [0.0015, '1.5\u00b5s'],
    [60_000, '1m0s'],
    [10_000, '10s'],
    [86_400_000, '24h0m0s'],
    [315_360_000_000, '87600h0m0s'],
    [5_400_000, '1h30m0s'],
    [-3000, '-3s'],
    [MAX_DURATION_MS, '2562047h47m16.854775807s'],
    [Number.POSITIVE_INFINITY, '2562047h47m16.854775807s'],
  ])('formatDuration(%s) is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  test.each([
    '0s',
    '1ns',
    '1.1\u00b5s',
    '100ms',
    '1m0s',
    '10s',
    '1h30m0s',
    '24h0m0s',
    '87600h0m0s',
    '2160h0m0s',
    '4m5.001s',
    '8m0.000000001s',
    '2562047h47m16.854775807s',
  ])('%s round-trips through milliseconds', (text) => {
    expect(formatDuration(parseDuration(text))).toBe(text);
  });

  test('the maximum is exported in milliseconds', () => {
    expect(parseDuration('2562047h47m16.854775807s')).toBe(MAX_DURATION_MS);
    expect(MAX_DURATION_MS).toBeCloseTo(9_223_372_036_854.775, 2);
  });

  test('NaN is not a duration', () => {
    expect(() => formatDuration(Number.NaN)).toThrow(MeshError);
  });
});
