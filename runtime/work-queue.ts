import type { Clock, TimerHandle } from './clock.js';
import { defaultKeyOf, type RateLimiter } from './rate-limiter.js';

/**
 * client-go's rate-limited work queue. A key waiting in the queue is there once however often it
 * is added; a key being processed is never handed to a second worker: adding it meanwhile marks
 * it dirty, and `done` puts it back in the queue.
 */
export interface WorkQueue<K> {
  readonly name: string;
  /** Queues the key unless it is already waiting; ignored once shutting down. */
  add(key: K): void;
  /**
   * The next key, waiting for one if need be; `undefined` once the queue is shut down and empty.
   * The caller must call `done(key)` when it has finished with it.
   */
  get(): Promise<K | undefined>;
  /** Marks the key processed; if it was added meanwhile, it is queued again. */
  done(key: K): void;
  /** Adds the key after `delayMs` on the clock; for a key already waiting, the earliest time wins. */
  addAfter(key: K, delayMs: number): void;
  /** Adds the key after the rate limiter's delay for it (a failure: the backoff grows). */
  addRateLimited(key: K): void;
  /** Clears the key's failure history in the rate limiter (it succeeded). */
  forget(key: K): void;
  numRequeues(key: K): number;
  /** Keys waiting to be handed out (not counting delayed or in-process ones). */
  len(): number;
  /** Stops accepting keys; waiting keys are still handed out, then `get` resolves `undefined`. */
  shutDown(): void;
  /** Like `shutDown`, then resolves once no key is being processed. */
  shutDownWithDrain(): Promise<void>;
  isShuttingDown(): boolean;
}

export interface WorkQueueOptions<K> {
  clock: Clock;
  rateLimiter: RateLimiter<K>;
  name: string;
  /** Identity of a key; default: strings as they are, objects as JSON with sorted fields. */
  keyOf?: (key: K) => string;
}

export function newWorkQueue<K>(options: WorkQueueOptions<K>): WorkQueue<K> {
  const { clock, rateLimiter, name } = options;
  const keyOf = options.keyOf ?? defaultKeyOf;

  // FIFO of ids; `items` remembers the key object for each known id.
  const queue: string[] = [];
  const items = new Map<string, K>();
  const dirty = new Set<string>();
  const processing = new Set<string>();
  const delayed = new Map<string, { dueAt: number; timer: TimerHandle }>();
  const getters: ((key: K | undefined) => void)[] = [];
  const drainWaiters: (() => void)[] = [];
  let shuttingDown = false;

  const pump = (): void => {
    while (getters.length > 0 && queue.length > 0) {
      const id = queue.shift() as string;
      const key = items.get(id) as K;
      processing.add(id);
      dirty.delete(id);
      getters.shift()?.(key);
    }
    if (shuttingDown && queue.length === 0) {
      for (const resolve of getters.splice(0)) resolve(undefined);
    }
  };

  const settleDrain = (): void => {
    if (processing.size === 0) for (const resolve of drainWaiters.splice(0)) resolve();
  };

  const forgetItemIfIdle = (id: string): void => {
    if (!dirty.has(id) && !processing.has(id) && !delayed.has(id)) items.delete(id);
  };

  const add = (key: K): void => {
    if (shuttingDown) return;
    const id = keyOf(key);
    if (dirty.has(id)) return;
    dirty.add(id);
    items.set(id, key);
    if (processing.has(id)) return;
    queue.push(id);
    pump();
  };

  const addAfter = (key: K, delayMs: number): void => {
    if (shuttingDown) return;
    if (delayMs <= 0) {
      add(key);
      return;
    }
    const id = keyOf(key);
    const dueAt = clock.now() + delayMs;
    const existing = delayed.get(id);
    if (existing && existing.dueAt <= dueAt) return;
    existing?.timer.cancel();
    if (!items.has(id)) items.set(id, key);
    const timer = clock.setTimer(() => {
      delayed.delete(id);
      add(items.get(id) ?? key);
    }, delayMs);
    delayed.set(id, { dueAt, timer });
  };

  const shutDown = (): void => {
    shuttingDown = true;
    for (const [id, entry] of delayed) {
      entry.timer.cancel();
      delayed.delete(id);
      forgetItemIfIdle(id);
    }
    pump();
  };

  return {
    name,
    add,
    addAfter,

    get() {
      return new Promise<K | undefined>((resolve) => {
        getters.push(resolve);
        pump();
      });
    },

    done(key) {
      const id = keyOf(key);
      if (!processing.delete(id)) return;
      if (dirty.has(id)) {
        queue.push(id);
        pump();
      } else {
        forgetItemIfIdle(id);
      }
      settleDrain();
    },

    addRateLimited(key) {
      addAfter(key, rateLimiter.when(key));
    },

    forget(key) {
      rateLimiter.forget(key);
    },

    numRequeues(key) {
      return rateLimiter.numRequeues(key);
    },

    len() {
      return queue.length;
    },

    shutDown,

    shutDownWithDrain() {
      shutDown();
      if (processing.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drainWaiters.push(resolve));
    },

    isShuttingDown() {
      return shuttingDown;
    },
  };
}
