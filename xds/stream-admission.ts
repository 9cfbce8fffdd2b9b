import { availableParallelism } from 'node:os';
import type { Clock } from '../runtime/index.js';

/**
 * The reference's default rate of new xDS streams per second: `min(15 + 5 × cores, 100)`, so that
 * a reconnect storm after a restart cannot starve the pushes to proxies already connected.
 */
export function defaultNewStreamsPerSecond(cores: number = availableParallelism()): number {
  return Math.min(15 + 5 * cores, 100);
}

export interface StreamAdmissionOptions {
  /** New streams per second; 0 or less admits every stream at once. */
  readonly perSecond: number;
  /** How long a stream may wait for its turn before it is refused (the reference: 1 s). */
  readonly maxWaitMs: number;
  readonly clock: Clock;
}

export interface StreamAdmission {
  /**
   * Resolves true once the stream may start (at once or after a wait within `maxWaitMs`), or
   * false at once when its turn would come later than that; a refused stream takes no turn.
   */
  admit(signal?: AbortSignal): Promise<boolean>;
}

/** A token bucket of one token refilled `perSecond` times a second, as golang.org/x/time/rate with burst 1. */
export function newStreamAdmission(options: StreamAdmissionOptions): StreamAdmission {
  const { perSecond, maxWaitMs, clock } = options;
  if (!(perSecond > 0)) return { admit: async () => true };
  const intervalMs = 1000 / perSecond;
  let nextFreeAt = Number.NEGATIVE_INFINITY;
  return {
    async admit(signal) {
      const now = clock.now();
      const turn = Math.max(now, nextFreeAt);
      const waitMs = turn - now;
      if (waitMs > maxWaitMs) return false;
      nextFreeAt = turn + intervalMs;
      if (waitMs <= 0) return true;
      try {
        await clock.sleep(waitMs, signal);
        return true;
      } catch {
        return false;
      }
    },
  };
}
