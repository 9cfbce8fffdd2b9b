import { randomUUID } from 'node:crypto';
import { formatObjectKey } from '../names/index.js';
import type { Clock } from './clock.js';
import { MeshError, TerminalError, errorMessage } from './errors.js';
import type { Logger } from './log/logger.js';
import { newDefaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';
import type { Runnable } from './runnable.js';
import { objectKeyOf, type KubeObject, type ObjectKey, type Source } from './source.js';
import { newWorkQueue, type WorkQueue } from './work-queue.js';
import { untilAborted } from './until-aborted.js';

/** What a reconciler gets: the key only (level-based: never the event), plus per-call context. */
export interface ReconcileRequest {
  key: ObjectKey;
  /** Fresh for every call; also bound into `log`. */
  reconcileId: string;
  /** Bound with {controller, namespace, name, reconcileId}. */
  log: Logger;
  /** Aborts when the controller stops. */
  signal: AbortSignal;
}

export interface ReconcileResult {
  /** Reconcile again after this delay (the failure history is cleared first). To retry with backoff, throw. */
  requeueAfterMs?: number;
}

/**
 * Reads the current state for `key` and makes the world match it. Resolving forgets the key; a
 * thrown error retries it with backoff; a thrown `TerminalError` is logged, counted, never retried.
 */
export type Reconciler = (request: ReconcileRequest) => Promise<ReconcileResult | void>;

/** Maps an event's object to the keys to reconcile (an owner, every object that refers to it…). */
export type MapFn<T extends KubeObject> = (object: T) => ObjectKey | readonly ObjectKey[] | undefined;

export interface SyncErrorCounter {
  inc(labels?: Record<string, string>): void;
}

export interface ControllerOptions {
  name: string;
  reconcile: Reconciler;
  /** Concurrent reconciles (never two on one key). Default 1. */
  workers?: number;
  clock: Clock;
  /** Default: client-go's controller limiter (5 ms..1000 s per key, 10 qps / burst 100). */
  rateLimiter?: RateLimiter<ObjectKey>;
  log: Logger;
  onError?: {
    /** Incremented once per failed reconcile, terminal or not. */
    syncErrors?: SyncErrorCounter;
    /** Labels passed to `syncErrors.inc` (bounded values only, e.g. `{cluster: 'Kubernetes'}`). */
    labels?: Record<string, string>;
  };
  /** Whether the controller runs only on the elected leader. Default true, as controller-runtime. */
  needLeaderElection?: boolean;
}

export interface Controller extends Runnable {
  readonly name: string;
  readonly group: 'default';
  /** The work queue of the current run (a new one each time the controller starts). */
  readonly queue: WorkQueue<ObjectKey>;
  /** Queues the key for reconciling (deduplicated while it waits). */
  enqueue(key: ObjectKey): void;
  /**
   * Reconciles on every event of the source: each event's object is mapped to keys (default:
   * its own key). Subscribed at start; the objects already in the store are queued then.
   * Must be called before start.
   */
  watches<T extends KubeObject>(source: Source<T>, mapFn?: MapFn<T>): Controller;
  /** The sources passed to `watches`, for the builder to register with the manager. */
  sources(): readonly Source<KubeObject>[];
}

interface Watch {
  source: Source<KubeObject>;
  mapFn: MapFn<KubeObject>;
}

export function newController(options: ControllerOptions): Controller {
  const { name, reconcile, clock, log } = options;
  const workers = options.workers ?? 1;
  if (!Number.isInteger(workers) || workers < 1) {
    throw new MeshError('invalid-workers', `controller ${name}: workers must be a positive integer, got ${workers}`);
  }
  const rateLimiter = options.rateLimiter ?? newDefaultControllerRateLimiter<ObjectKey>(clock, formatObjectKey);
  const newQueue = (): WorkQueue<ObjectKey> => newWorkQueue<ObjectKey>({ clock, rateLimiter, name, keyOf: formatObjectKey });
  let queue = newQueue();
  const needLeaderElection = options.needLeaderElection ?? true;
  const watchList: Watch[] = [];
  // Watches are fixed at the first start; a controller that stopped may start again (a leader
  // that lost its lease and won it back), with a fresh queue filled from the stores.
  let configured = false;
  let running = false;
  let runs = 0;

  const countError = (): void => {
    const labels = options.onError?.labels;
    if (labels) options.onError?.syncErrors?.inc(labels);
    else options.onError?.syncErrors?.inc();
  };

  const reconcileHandler = async (key: ObjectKey, signal: AbortSignal): Promise<void> => {
    const reconcileId = randomUUID();
    const bound = log.with({ controller: name, namespace: key.namespace, name: key.name, reconcileId });
    let result: ReconcileResult | void;
    try {
      result = await reconcile({ key: { ...key }, reconcileId, log: bound, signal });
    } catch (error) {
      if (signal.aborted) {
        // Stopping: the reconcile was cut short, not failed; the queue takes no more keys anyway.
        bound.debug({ error: errorMessage(error) }, 'reconcile aborted');
        return;
      }
      countError();
      if (isTerminal(error)) {
        bound.error({ error: errorMessage(error) }, 'reconcile failed, terminal error, not retrying');
        queue.forget(key);
        return;
      }
      bound.error({ error: errorMessage(error), requeues: queue.numRequeues(key) }, 'reconcile failed, retrying');
      queue.addRateLimited(key);
      return;
    }
    const requeueAfterMs = result?.requeueAfterMs ?? 0;
    if (requeueAfterMs > 0) {
      queue.forget(key);
      queue.addAfter(key, requeueAfterMs);
    } else {
      queue.forget(key);
    }
    bound.debug('reconciled');
  };

  const worker = async (queue: WorkQueue<ObjectKey>, signal: AbortSignal): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        if (!signal.aborted) await reconcileHandler(key, signal);
      } finally {
        queue.done(key);
      }
    }
  };

  const enqueueFor = (watch: Watch, object: KubeObject): void => {
    let mapped: ObjectKey | readonly ObjectKey[] | undefined;
    try {
      mapped = watch.mapFn(object);
    } catch (error) {
      log.error({ controller: name, source: watch.source.name, error: errorMessage(error) }, 'mapping an event failed');
      return;
    }
    if (mapped === undefined) return;
    const keys: readonly ObjectKey[] = Array.isArray(mapped) ? mapped : [mapped as ObjectKey];
    for (const key of keys) queue.add(key);
  };

  const controller: Controller = {
    name,
    group: 'default',
    get queue() {
      return queue;
    },

    needLeaderElection: () => needLeaderElection,

    enqueue(key) {
      queue.add(key);
    },

    watches<T extends KubeObject>(source: Source<T>, mapFn?: MapFn<T>): Controller {
      if (configured) throw new MeshError('already-started', `controller ${name}: watches() after start`);
      watchList.push({
        source: source as unknown as Source<KubeObject>,
        mapFn: (mapFn ?? objectKeyOf) as MapFn<KubeObject>,
      });
      return controller;
    },

    sources() {
      return watchList.map((w) => w.source);
    },

    async start(signal: AbortSignal): Promise<void> {
      if (running) throw new MeshError('already-started', `controller ${name}: start() called while it runs`);
      running = true;
      configured = true;
      if (runs++ > 0) queue = newQueue();
      const current = queue;
      const unsubscribes = watchList.map((watch) => {
        const unsubscribe = watch.source.subscribe((event) => enqueueFor(watch, event.object));
        // Events delivered before this subscription are covered by the store's current content.
        for (const object of watch.source.store.list()) enqueueFor(watch, object);
        return unsubscribe;
      });
      try {
        try {
          // Raced with the signal too, in case a source does not honour it.
          await Promise.race([Promise.all(watchList.map((w) => w.source.waitForSync(signal))), untilAborted(signal)]);
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        if (signal.aborted) return;
        log.info({ controller: name, workers }, 'starting workers');
        const active = Array.from({ length: workers }, () => worker(current, signal));
        await untilAborted(signal);
        log.info({ controller: name }, 'stopping workers, waiting for reconciles in flight');
        current.shutDown();
        await Promise.all(active);
        log.info({ controller: name }, 'all workers stopped');
      } finally {
        current.shutDown();
        for (const unsubscribe of unsubscribes) unsubscribe();
        running = false;
      }
    },
  };
  return controller;
}

/** A TerminalError itself or anywhere in the `cause` chain (Go's errors.Is). */
function isTerminal(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 16; current = current.cause, depth++) {
    if (current instanceof TerminalError) return true;
  }
  return false;
}
