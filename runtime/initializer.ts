import type { Clock } from './clock.js';
import { MeshError, UsageError, errorMessage } from './errors.js';
import type { Logger } from './log/logger.js';
import { newRestartBackoff, type RestartBackoffOptions } from './restart-backoff.js';
import type { Runnable, RunnableGroup } from './runnable.js';
import { rejectWhenAborted, untilAborted } from './until-aborted.js';

export interface InitializerOptions<T> {
  readonly name: string;
  readonly group: RunnableGroup;
  /** The work that may fail while a dependency is away (the API server): retried until it succeeds. */
  readonly init: (signal: AbortSignal) => Promise<T>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly backoff?: RestartBackoffOptions;
}

export interface Initializer<T> extends Runnable {
  /** Resolves with the result once an attempt succeeded; the manager waits on it like a listener. */
  waitForReady(signal?: AbortSignal): Promise<void>;
  /** The result; throws before it exists. */
  value(): T;
}

/**
 * A runnable that performs a start-up step which depends on something that may be down (the
 * API server), retrying it with backoff instead of failing the process: the rest of the manager
 * (health, other listeners) stays up and reports not ready meanwhile. A `UsageError` (bad flags or
 * settings) is not retried: it fails the manager.
 */
export function newInitializer<T>(options: InitializerOptions<T>): Initializer<T> {
  const { clock, log } = options;
  let result: { value: T } | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  return {
    name: options.name,
    group: options.group,
    async start(signal) {
      const backoff = newRestartBackoff(options.backoff);
      for (let attempt = 1; !result && !signal.aborted; attempt++) {
        try {
          result = { value: await options.init(signal) };
          if (attempt > 1) log.info({ step: options.name, attempt }, 'start-up step succeeded');
          markReady();
        } catch (error) {
          if (signal.aborted) return;
          // Bad flags or settings do not get better by waiting: they stop the program.
          if (error instanceof UsageError) throw error;
          const retryMs = backoff.next();
          log.warn({ step: options.name, attempt, retryMs, error: errorMessage(error) }, 'start-up step failed; retrying');
          await clock.sleep(retryMs, signal).catch(() => undefined);
        }
      }
      await untilAborted(signal);
    },
    waitForReady: (signal) => (signal ? Promise.race([ready, rejectWhenAborted(signal)]) : ready),
    value() {
      if (!result) throw new MeshError('not-ready', `${options.name} has not completed yet`);
      return result.value;
    },
  };
}
