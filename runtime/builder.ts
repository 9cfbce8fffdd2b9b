import { newController, type Controller, type MapFn, type Reconciler, type SyncErrorCounter } from './controller.js';
import type { Logger } from './log/logger.js';
import type { Manager } from './manager.js';
import type { RateLimiter } from './rate-limiter.js';
import type { KubeObject, ObjectKey, Source } from './source.js';

/**
 * Reads as a sentence:
 *   controllerFor(manager, 'peer-authentication').watches(source).withWorkers(2).complete(reconcile)
 */
export interface ControllerBuilder {
  /** Reconciles on this source's events; `mapFn` maps an object to keys (default: its own key). */
  watches<T extends KubeObject>(source: Source<T>, mapFn?: MapFn<T>): ControllerBuilder;
  withWorkers(workers: number): ControllerBuilder;
  withRateLimiter(rateLimiter: RateLimiter<ObjectKey>): ControllerBuilder;
  /** Default: the manager's logger. */
  withLogger(log: Logger): ControllerBuilder;
  withSyncErrors(counter: SyncErrorCounter, labels?: Record<string, string>): ControllerBuilder;
  /** Whether it runs only on the elected leader. Default true, as controller-runtime. */
  withLeaderElection(needLeaderElection: boolean): ControllerBuilder;
  /** Builds the controller, registers it and its sources with the manager, and returns it. */
  complete(reconcile: Reconciler): Controller;
}

export function controllerFor(manager: Manager, name: string): ControllerBuilder {
  const watches: { source: Source<KubeObject>; mapFn: MapFn<KubeObject> | undefined }[] = [];
  let workers = 1;
  let rateLimiter: RateLimiter<ObjectKey> | undefined;
  let log: Logger = manager.log;
  let onError: { syncErrors: SyncErrorCounter; labels?: Record<string, string> } | undefined;
  let needLeaderElection = true;

  const builder: ControllerBuilder = {
    watches<T extends KubeObject>(source: Source<T>, mapFn?: MapFn<T>) {
      watches.push({
        source: source as unknown as Source<KubeObject>,
        mapFn: mapFn as MapFn<KubeObject> | undefined,
      });
      return builder;
    },
    withWorkers(n) {
      workers = n;
      return builder;
    },
    withRateLimiter(limiter) {
      rateLimiter = limiter;
      return builder;
    },
    withLogger(logger) {
      log = logger;
      return builder;
    },
    withSyncErrors(counter, labels) {
      onError = labels ? { syncErrors: counter, labels } : { syncErrors: counter };
      return builder;
    },
    withLeaderElection(need) {
      needLeaderElection = need;
      return builder;
    },
    complete(reconcile) {
      const controller = newController({
        name,
        reconcile,
        workers,
        clock: manager.clock,
        log,
        needLeaderElection,
        ...(rateLimiter ? { rateLimiter } : {}),
        ...(onError ? { onError } : {}),
      });
      for (const { source, mapFn } of watches) {
        controller.watches(source, mapFn);
        manager.add(source);
      }
      manager.add(controller);
      return controller;
    },
  };
  return builder;
}
