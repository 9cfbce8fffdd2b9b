import { MeshError, newHealthChecks } from './runtime/index.js';
import type { Clock, Logger, Manager, Runnable } from './runtime/index.js';

/** A `Manager` that only collects what is added to it, for a caller that adds the runnables to its own. */
export interface RunnableCollector extends Manager {
  /** In the order they were added, each once. */
  readonly runnables: readonly Runnable[];
}

/**
 * Lets builders that register with a manager (`controllerFor`) be used before the daemon's manager
 * exists: the collected runnables carry their own group and leader-election needs, so adding them
 * to the real manager later places them exactly as a direct registration would.
 */
export function newRunnableCollector(options: { log: Logger; clock: Clock }): RunnableCollector {
  const runnables: Runnable[] = [];
  return {
    runnables,
    log: options.log,
    clock: options.clock,
    health: newHealthChecks(),
    add(runnable) {
      if (!runnables.includes(runnable)) runnables.push(runnable);
    },
    isLeader: () => false,
    start: () => Promise.reject(new MeshError('not-a-manager', 'a runnable collector cannot start; add its runnables to a manager')),
  };
}
