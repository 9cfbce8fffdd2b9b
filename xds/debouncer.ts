import type { Clock, Logger, TimerHandle } from '../runtime/index.js';
import { mergePushRequests, normalizePushRequest, type PushRequest } from './push/push-request.js';
import { errorMessage } from '../runtime/index.js';

export interface DebouncerOptions {
  clock: Clock;
  /** Quiet period: a push waits until no event arrived for this long (PILOT_DEBOUNCE_AFTER). */
  debounceAfterMs: number;
  /** Cap from the first event of a batch (PILOT_DEBOUNCE_MAX). */
  debounceMaxMs: number;
  /** False sends endpoint-only requests through at once (PILOT_ENABLE_EDS_DEBOUNCE). */
  enableEdsDebounce: boolean;
  /** Runs one merged push; the next debounced push waits until it settles. */
  push: (request: PushRequest) => Promise<void>;
  log: Logger;
}

export interface Debouncer {
  add(request: PushRequest): void;
  /** Drops any pending batch and timer. */
  stop(): void;
  /** True while a batch waits for its timer. */
  isPending(): boolean;
}

/**
 * The reference's debounce: the first event arms a timer of `debounceAfterMs`; when it fires,
 * the batch is pushed if it has been quiet for `debounceAfterMs` or `debounceMaxMs` passed since
 * the first event, otherwise the timer is re-armed for the rest of the quiet period. Only one
 * debounced push runs at a time; a batch that is due meanwhile goes out when it settles.
 */
export function newDebouncer(options: DebouncerOptions): Debouncer {
  const { clock, debounceAfterMs, debounceMaxMs } = options;
  let pending: PushRequest | undefined;
  let firstEventAt = 0;
  let lastEventAt = 0;
  let timer: TimerHandle | undefined;
  let pushing = false;
  let stopped = false;

  const runPush = (request: PushRequest, exclusive: boolean): void => {
    if (exclusive) pushing = true;
    void options
      .push(request)
      .catch((error: unknown) => options.log.error({ error: errorMessage(error) }, 'push failed'))
      .finally(() => {
        if (!exclusive) return;
        pushing = false;
        if (!stopped && pending && !timer) check();
      });
  };

  const check = (): void => {
    timer = undefined;
    if (!pending || stopped) return;
    const now = clock.now();
    const quiet = now - lastEventAt;
    const waited = now - firstEventAt;
    if (quiet >= debounceAfterMs || waited >= debounceMaxMs) {
      if (pushing) return; // pushed when the running push settles
      const request = pending;
      pending = undefined;
      runPush(request, true);
    } else {
      timer = clock.setTimer(check, Math.min(debounceAfterMs - quiet, debounceMaxMs - waited));
    }
  };

  return {
    add(request) {
      if (stopped) return;
      if (!options.enableEdsDebounce && !request.full) {
        runPush(normalizePushRequest(request), false);
        return;
      }
      const now = clock.now();
      lastEventAt = now;
      if (!pending) {
        firstEventAt = now;
        pending = normalizePushRequest(request);
        if (debounceAfterMs <= 0) {
          check();
          return;
        }
        timer = clock.setTimer(check, debounceAfterMs);
        return;
      }
      pending = mergePushRequests(pending, normalizePushRequest(request));
    },
    stop() {
      stopped = true;
      timer?.cancel();
      timer = undefined;
      pending = undefined;
    },
    isPending: () => pending !== undefined,
  };
}
