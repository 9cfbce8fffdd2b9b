import type { Runnable, RunnableGroup } from './runnable.js';

/** Resolves once `signal` aborts (at once if it already has): how a runnable waits out its life. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Rejects with the signal's reason once it aborts: raced against readiness, so waiting stops with the run. */
export function rejectWhenAborted(signal: AbortSignal): Promise<never> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

type Cleanup = () => void | Promise<void>;

/**
 * A runnable from a function, as controller-runtime's `RunnableFunc`: `run` starts the work (a
 * server listening, a loop launched) and may return its clean-up, called once the signal aborts.
 * The runnable is ready when `run` has returned, so the manager starts the next group only then.
 */
export function runnableOf(
  name: string,
  run: (signal: AbortSignal) => void | Cleanup | Promise<void | Cleanup>,
  options: { group?: RunnableGroup; needLeaderElection?: boolean } = {},
): Runnable {
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  return {
    name,
    ...(options.group ? { group: options.group } : {}),
    ...(options.needLeaderElection !== undefined ? { needLeaderElection: () => options.needLeaderElection === true } : {}),
    async start(signal) {
      const cleanup = await run(signal);
      markReady();
      try {
        await untilAborted(signal);
      } finally {
        await cleanup?.();
      }
    },
    waitForReady: (signal) => Promise.race([ready, rejectWhenAborted(signal)]),
  };
}

/**
 * `done`, or a rejection with the signal's reason if it aborts first. The abort listener is
 * removed once `done` settles, so waits that end do not pile up on a long-lived signal.
 */
export function settledOrAborted<T>(done: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return done;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    done.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
