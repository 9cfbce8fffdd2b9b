/**
 * Durations in the policy API are strings in the Kubernetes/CEL form: a sequence of decimal numbers,
 * each with an optional fraction and a unit (`1s`, `0.5s`, `100ms`, `1h30m`), or `0`.
 */
export const DURATION_PATTERN = /^(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;

const COMPONENT = /([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)/g;

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

export const NANOS_PER_MILLISECOND = 1_000_000n;

/** Parses a duration string to nanoseconds (exact, fractions truncated as Go does), or undefined if malformed. */
export function parseDurationNanos(text: string): bigint | undefined {
  if (!DURATION_PATTERN.test(text)) return undefined;
  if (text === '0') return 0n;
  let total = 0n;
  for (const match of text.matchAll(COMPONENT)) {
    const [, whole = '', fraction = '', unit = ''] = match;
    const perUnit = NANOS_PER_UNIT[unit];
    if (perUnit === undefined) return undefined;
    total += BigInt(whole === '' ? '0' : whole) * perUnit;
    if (fraction !== '') {
      total += (BigInt(fraction) * perUnit) / 10n ** BigInt(fraction.length);
    }
  }
  return total;
}

/** Milliseconds as a number, for callers that build config from a validated duration. */
export function parseDurationMs(text: string): number | undefined {
  const nanos = parseDurationNanos(text);
  return nanos === undefined ? undefined : Number(nanos) / 1e6;
}
