/** Exponential backoff between restarts of a long-running loop (a list/watch, a reconnect). */
export interface RestartBackoffOptions {
  /** First delay. Default 800 ms. */
  initialMs?: number;
  /** Upper bound of any delay, jitter included. Default 30 s. */
  maxMs?: number;
  /** Growth per consecutive failure. Default 2. */
  factor?: number;
  /** Adds up to `jitter × delay` at random, so many clients do not retry in step. Default 1. */
  jitter?: number;
}

export interface RestartBackoff {
  /** The delay before the next attempt; each call grows the following one. */
  next(): number;
  /** Back to `initialMs`, after a healthy period. */
  reset(): void;
}

/** The defaults are client-go's reflector backoff (800 ms, ×2, jitter 1.0, capped at 30 s). */
export function newRestartBackoff(options: RestartBackoffOptions = {}, random: () => number = Math.random): RestartBackoff {
  const initialMs = options.initialMs ?? 800;
  const maxMs = options.maxMs ?? 30_000;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 1;
  let baseMs = initialMs;
  return {
    next(): number {
      const delay = Math.min(maxMs, baseMs + random() * jitter * baseMs);
      baseMs = Math.min(maxMs, baseMs * factor);
      return Math.round(delay);
    },
    reset(): void {
      baseMs = initialMs;
    },
  };
}
