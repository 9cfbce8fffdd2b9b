/** Time as an injected dependency, so debounce, backoff and lease tests never sleep. */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `delayMs`; the handle cancels it. */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  /** Resolves after `delayMs`, or rejects with the signal's reason once it aborts. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}

export function newRealClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer: realTimer,
    sleep: (delayMs, signal) => sleepWith(realTimer, delayMs, signal),
  };
}

function realTimer(fn: () => void, delayMs: number): TimerHandle {
  const timer = setTimeout(fn, Math.max(0, delayMs));
  return { cancel: () => clearTimeout(timer) };
}

export function sleepWith(setTimer: (fn: () => void, delayMs: number) => TimerHandle, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      handle.cancel();
      reject(signal?.reason);
    };
    const handle = setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
