/** The reference's SECRET_GRACE_PERIOD_RATIO_JITTER: renewals land within ±1 % of the lifetime around the grace point. */
export const GRACE_RATIO_JITTER = 0.01;

/**
 * A jitter of the grace ratio as the reference draws it: up to `GRACE_RATIO_JITTER`, added,
 * subtracted or left out with equal chance, so that a fleet started together renews spread out.
 */
export function graceRatioJitter(random: () => number = Math.random): number {
  return random() * GRACE_RATIO_JITTER * (Math.floor(random() * 3) - 1);
}

export interface RenewalInput {
  /** When the certificate was obtained (its lifetime counts from there, as the reference's `CreatedTime`). */
  readonly obtainedAtMs: number;
  readonly notAfterMs: number;
  readonly nowMs: number;
  /** SECRET_GRACE_PERIOD_RATIO: renew when this fraction of the lifetime is left. */
  readonly graceRatio: number;
  /** From `graceRatioJitter`. */
  readonly jitter: number;
}

/** How long from now until the certificate is renewed: at (1 − ratio ± jitter) of its lifetime, never negative. */
export function renewalDelayMs(input: RenewalInput): number {
  const lifetime = Math.max(0, input.notAfterMs - input.obtainedAtMs);
  const grace = (input.graceRatio + input.jitter) * lifetime;
  return Math.max(0, input.notAfterMs - grace - input.nowMs);
}

/** Renewal retries back off exponentially from 1 s up to this. */
export const RETRY_MAX_MS = 60_000;
/** Once the certificate has expired, every wait is an outage: retries come at least this often. */
export const EXPIRED_RETRY_MAX_MS = 5_000;
/** The shortest wait between retries, however close the expiry. */
export const RETRY_MIN_MS = 200;

export interface RetryInput {
  /** Renewals failed in a row before this one. */
  readonly failures: number;
  readonly nowMs: number;
  /** The expiry of the certificate being served, if there is one. */
  readonly notAfterMs: number | undefined;
}

/**
 * How long after a failed renewal to try again: exponential backoff, but never more than half of
 * the served certificate's remaining validity, so that a CA back before the expiry is asked again
 * in time; after the expiry, at most `EXPIRED_RETRY_MAX_MS`.
 */
export function retryDelayMs(input: RetryInput): number {
  const backoff = Math.min(1000 * 2 ** input.failures, RETRY_MAX_MS);
  if (input.notAfterMs === undefined) return backoff;
  const remaining = input.notAfterMs - input.nowMs;
  if (remaining <= 0) return Math.min(backoff, EXPIRED_RETRY_MAX_MS);
  return Math.max(RETRY_MIN_MS, Math.min(backoff, Math.floor(remaining / 2)));
}
