/**
 * What the manager starts. `start` runs until the signal aborts and the runnable has cleaned
 * up (like a Go `Start(ctx)`); a rejection is a failure that stops the whole manager.
 */
export type RunnableGroup = 'httpServer' | 'webhook' | 'cache' | 'default';

export interface Runnable {
  /** A short name for logs and errors. */
  readonly name: string;
  start(signal: AbortSignal): Promise<void>;
  /** Which start-order group the runnable belongs to; `default` when absent. */
  readonly group?: RunnableGroup;
  /** True for runnables that run only on the elected leader. Default: false. */
  needLeaderElection?(): boolean;
  /**
   * Resolves once the runnable is serving (a server is listening, a cache has synced). The
   * manager waits on it before starting the next group. Absent means ready at once.
   */
  waitForReady?(signal: AbortSignal): Promise<void>;
}

/** A named check for liveness or readiness: resolves when healthy, throws with the reason otherwise. */
export type HealthCheck = () => Promise<void> | void;
