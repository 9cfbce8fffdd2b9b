import { setMaxListeners } from 'node:events';
import { newRealClock, type Clock } from './clock.js';
import { MeshError, errorMessage } from './errors.js';
import { newHealthChecks, type HealthChecks } from './health.js';
import { newLeaderElector, type LeaderElector, type LeaderElectorOptions } from './leader-election.js';
import type { Logger } from './log/logger.js';
import type { Runnable, RunnableGroup } from './runnable.js';

/** Leader election as the manager takes it: clock and log default to the manager's own. */
export type ManagerLeaderElectionOptions = Omit<LeaderElectorOptions, 'clock' | 'log'> & Partial<Pick<LeaderElectorOptions, 'clock' | 'log'>>;

export interface ManagerOptions {
  log: Logger;
  /** Default: the real clock. Bounds shutdown and drives leader election. */
  clock?: Clock;
  /** `--shutdownDuration`: the whole graceful stop. Default 10 s. */
  shutdownDurationMs?: number;
  /** When set, leader-elected runnables start only once this candidate holds the Lease. */
  leaderElection?: ManagerLeaderElectionOptions | undefined;
  /** An elector built elsewhere (another lock, a test); takes precedence over `leaderElection`. */
  leaderElector?: LeaderElector | undefined;
  /** Checks to register the `manager` readiness check with. Default: a fresh set. */
  health?: HealthChecks;
  /**
   * What losing the lease does. `exit` (default, controller-runtime's contract): the manager
   * stops with `leader-election-lost`. `recampaign` (the reference daemon's): only the
   * leader-elected runnables stop; everything else keeps serving, the candidate campaigns again,
   * and the leader-elected runnables start again (their `start` called anew) once it wins.
   */
  leadershipLoss?: 'exit' | 'recampaign';
}

export interface Manager {
  readonly health: HealthChecks;
  readonly clock: Clock;
  readonly log: Logger;
  /**
   * Registers a runnable (a second add of the same one is ignored). After start it is started at
   * once if its group already runs.
   */
  add(runnable: Runnable): void;
  /**
   * Starts every group in order and runs until the signal aborts or a runnable fails, then stops
   * the groups in reverse order. Resolves after a clean stop; rejects with the runnable's error,
   * with `leader-election-lost`, or with `shutdown-timeout` when the stop outlasts the duration.
   */
  start(signal: AbortSignal): Promise<void>;
  /** True while leader-elected runnables may run (always, once started, without leader election). */
  isLeader(): boolean;
}

/** Start order; shutdown runs it backwards. `leader` is the default group's leader-elected part. */
type Phase = RunnableGroup | 'leader';
const PHASES: readonly Phase[] = ['httpServer', 'webhook', 'cache', 'default', 'leader'];

interface PhaseState {
  runnables: Runnable[];
  abort: AbortController;
  started: boolean;
}

interface Running {
  name: string;
  phase: Phase | 'election';
  done: Promise<void>;
  settled: boolean;
}

export function newManager(options: ManagerOptions): Manager {
  const { log } = options;
  const clock = options.clock ?? newRealClock();
  const shutdownDurationMs = options.shutdownDurationMs ?? 10_000;
  const health = options.health ?? newHealthChecks();

  const phases = new Map<Phase, PhaseState>(PHASES.map((phase) => [phase, { runnables: [], abort: unboundedAbortController(), started: false }]));
  const known = new Set<Runnable>();
  const running: Running[] = [];
  // Built now so invalid options fail at construction; it does no work before run().
  const elector: LeaderElector | undefined =
    options.leaderElector ?? (options.leaderElection ? newLeaderElector({ clock, log, ...options.leaderElection }) : undefined);
  let started = false;
  let ready = false;
  let stopping = false;
  let leader = false;
  let failure: unknown;
  let requestStop: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));

  health.addReadinessCheck('manager', () => {
    if (stopping) throw new MeshError('stopping', 'manager is shutting down');
    if (!ready) throw new MeshError('not-ready', 'manager has not started all runnables and synced its caches yet');
  });

  const phaseOf = (runnable: Runnable): Phase => {
    const group = runnable.group ?? ('waitForSync' in runnable ? 'cache' : 'default');
    if (group === 'default' && runnable.needLeaderElection?.() === true) return 'leader';
    return group;
  };

  const state = (phase: Phase): PhaseState => phases.get(phase) as PhaseState;

  const fail = (runnable: string, error: unknown): void => {
    if (stopping) {
      log.error({ runnable, error: errorMessage(error) }, 'runnable failed while stopping');
      return;
    }
    log.error({ runnable, error: errorMessage(error) }, 'runnable failed, stopping the manager');
    failure ??= error;
    requestStop();
  };

  /** Runs `work`, tracked for the shutdown report; a rejection fails the manager. */
  const track = (name: string, phase: Running['phase'], work: () => Promise<void>): Promise<void> => {
    const entry: Running = { name, phase, done: Promise.resolve(), settled: false };
    entry.done = Promise.resolve()
      .then(work)
      .then(
        () => undefined,
        (error: unknown) => fail(name, error),
      )
      .finally(() => {
        entry.settled = true;
      });
    running.push(entry);
    return entry.done;
  };

  const launch = (runnable: Runnable, phase: Phase): void => {
    void track(runnable.name, phase, () => runnable.start(state(phase).abort.signal));
  };

  /** Starts a phase and waits until each of its runnables is ready; false if stopped meanwhile. */
  const startPhase = async (phase: Phase): Promise<boolean> => {
    const current = state(phase);
    current.started = true;
    if (current.runnables.length === 0) return true;
    log.info({ group: phase, runnables: current.runnables.map((r) => r.name) }, 'starting runnables');
    for (const runnable of current.runnables) launch(runnable, phase);
    const readies = current.runnables.map((runnable) => waitReady(runnable, current.abort.signal));
    await Promise.race([Promise.all(readies), stopRequested]);
    return !stopping && failure === undefined;
  };

  const waitReady = async (runnable: Runnable, signal: AbortSignal): Promise<void> => {
    try {
      const source = runnable as Runnable & { waitForSync?: (signal?: AbortSignal) => Promise<void> };
      if (typeof source.waitForSync === 'function') await source.waitForSync(signal);
      else await runnable.waitForReady?.(signal);
    } catch (error) {
      if (!signal.aborted) fail(runnable.name, error);
    }
  };

  const startLeaderElected = async (): Promise<void> => {
    leader = true;
    await startPhase('leader');
  };

  /** After a lost lease: stops the leader-elected runnables and readies their phase for the next term. */
  const stopLeaderElected = async (): Promise<void> => {
    leader = false;
    const current = state('leader');
    current.abort.abort(new MeshError('leadership-lost', 'leadership lost'));
    const stopping = running.filter((r) => r.phase === 'leader');
    await Promise.all(stopping.map((r) => r.done));
    for (const entry of stopping) running.splice(running.indexOf(entry), 1);
    current.abort = unboundedAbortController();
    current.started = false;
  };

  const stopRequestedFor = new Set<Running['phase']>();

  const stopPhase = async (phase: Phase): Promise<void> => {
    stopRequestedFor.add(phase);
    state(phase).abort.abort(new MeshError('stopping', 'manager is stopping'));
    await Promise.all(running.filter((r) => r.phase === phase).map((r) => r.done));
  };

  const shutdown = async (stopElector: () => Promise<void>): Promise<void> => {
    log.info({ shutdownDurationMs }, 'stopping runnables');
    await stopPhase('leader');
    leader = false;
    // Only now, with no leader-elected work running, may another candidate take over.
    await stopElector();
    for (const phase of ['default', 'cache', 'webhook', 'httpServer'] as const) await stopPhase(phase);
  };

  const manager: Manager = {
    health,
    clock,
    log,

    add(runnable) {
      if (known.has(runnable)) return;
      known.add(runnable);
      const phase = phaseOf(runnable);
      const current = state(phase);
      current.runnables.push(runnable);
      if (current.started && !stopping) {
        launch(runnable, phase);
        void waitReady(runnable, current.abort.signal);
      }
    },

    isLeader: () => leader,

    async start(signal) {
      if (started) throw new MeshError('already-started', 'manager: start() called twice');
      started = true;
      const onAbort = (): void => requestStop();
      if (signal.aborted) requestStop();
      else signal.addEventListener('abort', onAbort, { once: true });

      let electorDone: Promise<void> | undefined;
      const electorAbort = new AbortController();
      try {
        let ok = true;
        for (const phase of ['httpServer', 'webhook', 'cache', 'default'] as const) {
          if (stopping || signal.aborted || failure !== undefined) {
            ok = false;
            break;
          }
          ok = await startPhase(phase);
          if (!ok) break;
        }
        if (ok && !signal.aborted) {
          ready = true;
          log.info('all non-leader runnables started and caches synced');
          if (elector) {
            const candidate = elector;
            const recampaign = options.leadershipLoss === 'recampaign';
            // A term's leader-elected runnables are stopped before the next term may start them.
            let termEnded: Promise<void> = Promise.resolve();
            candidate.onStartedLeading(() => {
              if (!stopping) void termEnded.then(() => (stopping ? undefined : startLeaderElected()));
            });
            candidate.onStoppedLeading(() => {
              if (stopping) return;
              if (!recampaign) {
                fail('leader-election', new MeshError('leader-election-lost', 'leader election lost'));
                return;
              }
              log.warn('leadership lost: leader-elected runnables stop, the rest keeps serving; campaigning again');
              termEnded = stopLeaderElected();
            });
            electorDone = track('leader-election', 'election', async () => {
              // One term per run; with `recampaign` a lost term is followed by a new campaign.
              do {
                await candidate.run(electorAbort.signal);
              } while (recampaign && !electorAbort.signal.aborted && !stopping);
            });
          } else {
            void startLeaderElected();
          }
        }
        await stopRequested;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }

      stopping = true;
      const stop = shutdown(async () => {
        stopRequestedFor.add('election');
        electorAbort.abort();
        await electorDone;
      });

      let timer: { cancel(): void } | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = clock.setTimer(() => resolve('timeout'), shutdownDurationMs);
      });
      const outcome = await Promise.race([stop.then(() => 'stopped' as const), timedOut]);
      timer?.cancel();

      if (outcome === 'timeout') {
        // Those asked to stop that have not: later groups were never asked, so they are not named.
        const stuck = running.filter((r) => !r.settled && stopRequestedFor.has(r.phase)).map((r) => r.name);
        for (const current of phases.values()) current.abort.abort(new MeshError('stopping', 'manager is stopping'));
        electorAbort.abort();
        const timeout = new MeshError(
          'shutdown-timeout',
          `runnables still running after the shutdown duration of ${shutdownDurationMs}ms: ${stuck.join(', ')}`,
        );
        log.error({ shutdownDurationMs, stuck }, 'shutdown timed out');
        if (failure !== undefined) throw failure;
        throw timeout;
      }
      log.info('all runnables stopped');
      if (failure !== undefined) throw failure;
    },
  };
  return manager;
}

/** Every runnable of a group listens on the group's signal: more than Node's default of ten. */
function unboundedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
