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
