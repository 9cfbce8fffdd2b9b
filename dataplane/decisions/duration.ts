/**
 * `google.protobuf.Duration` as the data plane receives it: decoded from xDS it is
 * `{ seconds: '600', nanos: 5e8 }` (int64 seconds as text, zero fields left out, so `{}` is 0);
 * written by hand it may carry number seconds or use the JSON form `"1.5s"`.
 */
export type DurationConfig = { seconds?: number | string; nanos?: number } | string;

const JSON_DURATION = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/;
const MAX_NANOS = 999_999_999;

/** Milliseconds (whole, rounded down) of a duration; throws naming what is wrong with it. */
export function durationMs(duration: DurationConfig): number {
  let seconds: number;
  let nanos: number;
  if (typeof duration === 'string') {
    const parts = JSON_DURATION.exec(duration);
    if (!parts) throw new Error(`"${duration}" is not a duration (such as "0.5s")`);
    const sign = parts[1] === '-' ? -1 : 1;
    seconds = sign * Number(parts[2]);
    nanos = sign * Number((parts[3] ?? '').padEnd(9, '0'));
  } else {
    seconds = Number(duration.seconds ?? 0);
    nanos = duration.nanos ?? 0;
    if (!Number.isSafeInteger(seconds)) throw new Error(`seconds ${String(duration.seconds)} is not an integer`);
    if (!Number.isInteger(nanos) || Math.abs(nanos) > MAX_NANOS) throw new Error(`nanos ${nanos} is out of range`);
  }
  return Math.floor(seconds * 1000 + nanos / 1e6);
}

/** A duration that must not be negative (timeouts), in milliseconds. */
export function timeoutMs(duration: DurationConfig): number {
  const ms = durationMs(duration);
  if (ms < 0) throw new Error('must not be negative');
  return ms;
}
