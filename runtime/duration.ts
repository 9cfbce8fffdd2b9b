import { MeshError } from './errors.js';

/**
 * Go-compatible durations: `time.ParseDuration` and `time.Duration.String()`, computed on
 * BigInt nanoseconds (Go's int64) so the extreme values round-trip. The rest of the project
 * carries durations as milliseconds (`number`, possibly fractional).
 */

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const TWO_POW_63 = 1n << 63n;

const NS_PER_US = 1_000n;
const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;

/** The longest duration Go can hold, `2562047h47m16.854775807s`, in nanoseconds. */
export const MAX_DURATION_NS = MAX_INT64;

/** The same in milliseconds (as close as a double gets); formatDuration maps it back exactly. */
export const MAX_DURATION_MS = nsToMs(MAX_INT64);

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', NS_PER_US],
  ['\u00b5s', NS_PER_US], // µ, the micro sign
  ['\u03bcs', NS_PER_US], // μ, the Greek letter mu
  ['ms', NS_PER_MS],
  ['s', NS_PER_S],
  ['m', 60n * NS_PER_S],
  ['h', 3600n * NS_PER_S],
]);

/** Parses Go duration syntax (`100ms`, `1m0s`, `1.5h`, `-3s`, `0`) to milliseconds. */
export function parseDuration(text: string): number {
  return nsToMs(parseDurationNs(text));
}

/** Formats milliseconds as Go's `time.Duration.String()` does (`0s`, `1.5µs`, `24h0m0s`). */
export function formatDuration(ms: number): string {
  return formatDurationNs(msToNs(ms));
}

/**
 * Go's `time.ParseDuration`, step for step, including its overflow checks and its float64
 * arithmetic for fractions (so `1.0000000001h` truncates exactly as Go does).
 */
export function parseDurationNs(text: string): bigint {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw invalidDuration(text);

  let total = 0n;
  while (rest !== '') {
    if (!/^[0-9.]/.test(rest)) throw invalidDuration(text);

    const whole = /^[0-9]*/.exec(rest)?.[0] ?? '';
    rest = rest.slice(whole.length);
    let value = 0n;
    for (const digit of whole) {
      value = value * 10n + BigInt(digit);
      if (value > TWO_POW_63) throw invalidDuration(text);
    }

    let fraction = 0n;
    let scale = 1;
    let hasFraction = false;
    if (rest.startsWith('.')) {
      rest = rest.slice(1);
      const digits = /^[0-9]*/.exec(rest)?.[0] ?? '';
      rest = rest.slice(digits.length);
      hasFraction = digits !== '';
      // Like Go's leadingFraction: stop accumulating precision once int64 would overflow.
      for (const digit of digits) {
        if (fraction > MAX_INT64 / 10n) break;
        const next = fraction * 10n + BigInt(digit);
        if (next > TWO_POW_63) break;
        fraction = next;
        scale *= 10;
      }
    }
    if (whole === '' && !hasFraction) throw invalidDuration(text);

    const unitText = /^[^0-9.]*/.exec(rest)?.[0] ?? '';
    if (unitText === '') {
      throw new MeshError('invalid-duration', `missing unit in duration ${JSON.stringify(text)}`);
    }
    rest = rest.slice(unitText.length);
    const unit = UNITS.get(unitText);
    if (unit === undefined) {
      throw new MeshError(
        'invalid-duration',
        `unknown unit ${JSON.stringify(unitText)} in duration ${JSON.stringify(text)} (units are ns, us, µs, ms, s, m, h)`,
      );
    }

    if (value > TWO_POW_63 / unit) throw invalidDuration(text);
    value *= unit;
    if (fraction > 0n) {
      value += BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
      if (value > TWO_POW_63) throw invalidDuration(text);
    }
    total += value;
    if (total > TWO_POW_63) throw invalidDuration(text);
  }
  if (negative) return -total;
  if (total > MAX_INT64) throw invalidDuration(text);
  return total;
}

/** Go's `time.Duration.String()` for a duration in nanoseconds (clamped to int64). */
export function formatDurationNs(ns: bigint): string {
  const clamped = ns > MAX_INT64 ? MAX_INT64 : ns < MIN_INT64 ? MIN_INT64 : ns;
  const negative = clamped < 0n;
  const u = negative ? -clamped : clamped;
  const sign = negative ? '-' : '';

  if (u < NS_PER_S) {
    if (u === 0n) return '0s';
    if (u < NS_PER_US) return `${sign}${u}ns`;
    if (u < NS_PER_MS) return `${sign}${withFraction(u, 3)}µs`;
    return `${sign}${withFraction(u, 6)}ms`;
  }

  const seconds = withFraction(u % (60n * NS_PER_S), 9);
  const minutes = u / (60n * NS_PER_S);
  if (minutes === 0n) return `${sign}${seconds}s`;
  const hours = minutes / 60n;
  if (hours === 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${hours}h${minutes % 60n}m${seconds}s`;
}

/** `value / 10^precision` in decimal, trailing zeros and a bare point dropped (Go's fmtFrac + fmtInt). */
function withFraction(value: bigint, precision: number): string {
  const divisor = 10n ** BigInt(precision);
  const integer = value / divisor;
  const fraction = (value % divisor).toString().padStart(precision, '0').replace(/0+$/, '');
  return fraction === '' ? `${integer}` : `${integer}.${fraction}`;
}

function nsToMs(ns: bigint): number {
  return Number(ns / NS_PER_MS) + Number(ns % NS_PER_MS) / 1e6;
}

function msToNs(ms: number): bigint {
  if (Number.isNaN(ms)) throw new MeshError('invalid-duration', 'cannot format NaN as a duration');
  if (ms >= MAX_DURATION_MS) return MAX_INT64;
  if (ms <= -MAX_DURATION_MS) return MIN_INT64;
  // Split so the whole milliseconds stay exact and only the sub-millisecond part is rounded.
  const whole = Math.trunc(ms);
  return BigInt(whole) * NS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
}

function invalidDuration(text: string): MeshError<'invalid-duration'> {
  return new MeshError('invalid-duration', `invalid duration ${JSON.stringify(text)}`);
}
