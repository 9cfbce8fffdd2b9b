import { newInitialSyncTracker, type InitialSyncTracker } from '../sources/initial-sync-tracker.js';
import { controllerFor } from '../../runtime/index.js';
import type { Controller, KubeObject, Logger, Manager, MapFn, Reconciler, Source, SyncErrorCounter } from '../../runtime/index.js';

/** What every model controller is built with. */
export interface ControllerWiring {
  manager: Manager;
  log: Logger;
  syncErrors?: { counter: SyncErrorCounter; labels: Record<string, string> };
}

/**
 * Registers a non-leader controller (every replica keeps its own model) on one or more sources,
 * with a tracker of its first pass over what the sources held at start.
 */
export function wireController(
  wiring: ControllerWiring,
  name: string,
  watched: readonly { source: Source<KubeObject>; mapFn?: MapFn<KubeObject> }[],
  reconcile: Reconciler,
): { controller: Controller; tracker: InitialSyncTracker } {
  const tracker = newInitialSyncTracker(watched);
  let builder = controllerFor(wiring.manager, name).withLeaderElection(false).withLogger(wiring.log);
  for (const { source, mapFn } of watched) builder = builder.watches(source, mapFn);
  if (wiring.syncErrors) builder = builder.withSyncErrors(wiring.syncErrors.counter, wiring.syncErrors.labels);
  return { controller: builder.complete(tracker.wrap(reconcile)), tracker };
}
