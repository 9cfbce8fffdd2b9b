import { errorMessage, MeshError, type Clock, type Logger, type MeshMetrics, type Runnable, type TimerHandle } from '../../runtime/index.js';
import { WORKLOAD_ENTRY_ANNOTATIONS } from '../../names/index.js';
import type { WorkloadEntryClient } from './workload-entry-client.js';
import {
  acceptsHealthReports,
  autoRegisteredEntryName,
  buildEntryFromGroup,
  buildHealthCondition,
  connectedAtOf,
  identityMismatch,
  isAutoRegistered,
  isNewerReport,
  mayMarkDisconnected,
  shouldCleanup,
  withConnected,
  withDisconnected,
  withHealthCondition,
  type ConnectedWorkload,
  type StatusCondition,
  type WorkloadEntryObject,
} from './workload-entry-state.js';

export interface WorkloadEntryControllerOptions {
  /** Made on first use (client-node loads lazily). */
  readonly client: () => Promise<WorkloadEntryClient>;
  /** This daemon, as `mesh.io/workloadController` names it (its pod name). */
  readonly instanceId: string;
  /** PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION. */
  readonly autoRegistration: boolean;
  /** PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS. */
  readonly healthChecks: boolean;
  /** PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: disconnected this long, an auto-registered entry goes; the sweep runs every 10 × this. */
  readonly gracePeriodMs: number;
  /** `--keepaliveMaxServerConnectionAge`: an entry still marked connected 2.25 × this after connecting is stale. */
  readonly maxConnectionAgeMs: number;
  readonly clock: Clock;
  /** The `wle` scope. */
  readonly log: Logger;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
}

/** One agent health report: no `error_detail` is healthy. */
export interface HealthReport {
  readonly healthy: boolean;
  readonly message: string;
}

/**
 * The daemon side of workloads outside Kubernetes, fed by the xDS server: a stream's connect
 * creates or claims its WorkloadEntry, its disconnect marks it and (auto-registered) deletes it
 * after the grace period, its health reports become the entry's Healthy condition.
 */
export interface WorkloadEntryController {
  /** Registers the stream's workload, if it is one; throws a `MeshError` that refuses the stream. */
  connect(connectionId: string, workload: ConnectedWorkload): Promise<void>;
  /** The stream closed at `at`: the entry is marked disconnected in the background. */
  disconnect(connectionId: string, at: number): void;
  /** Writes the report as the entry's Healthy condition in the background. */
  reportHealth(connectionId: string, report: HealthReport): void;
  /** Cleans up every entry past its grace period (the periodic sweep). */
  sweep(): Promise<void>;
  /** Resolves once the background writes queued so far have settled (for tests and shutdown). */
  settled(): Promise<void>;
  /** The periodic sweep, on the leader only, and the timers' cleanup at shutdown. */
  readonly runnables: readonly Runnable[];
}

interface Registered {
  readonly workload: ConnectedWorkload;
  readonly entryName: string;
  readonly autoCreated: boolean;
  readonly key: string;
}

/** The reference retries a queued write five times (5 ms, doubling). */
const MAX_ATTEMPTS = 5;
const FIRST_BACKOFF_MS = 5;

export function newWorkloadEntryController(options: WorkloadEntryControllerOptions): WorkloadEntryController {
  const { clock, log, metrics, instanceId } = options;
  const errors = metrics.counter('auto_registration_errors_total');
  const registered = new Map<string, Registered>();
  /** Streams per workload (network, IP, entry, namespace): a reconnect may open before the old stream closes. */
  const streams = new Map<string, number>();
  const timers = new Set<TimerHandle>();
  const pending = new Set<Promise<void>>();
  /** Health writes of an entry one after another, so that reports land in order. */
  const healthChains = new Map<string, Promise<void>>();
  let clientPromise: Promise<WorkloadEntryClient> | undefined;
  const client = (): Promise<WorkloadEntryClient> => (clientPromise ??= options.client());

  const background = (work: Promise<void>): void => {
    const tracked = work.finally(() => pending.delete(tracked));
    pending.add(tracked);
  };

  /** Runs `attempt` until it settles, at most five times with doubling backoff; each failure counts. */
  const retrying = async (what: string, fields: object, attempt: () => Promise<void>): Promise<void> => {
    for (let n = 0; ; n++) {
      try {
        await attempt();
        return;
      } catch (error) {
        errors.inc();
        if (n + 1 >= MAX_ATTEMPTS) {
          log.error({ ...fields, error: errorMessage(error) }, `${what} failed`);
          return;
        }
        log.debug({ ...fields, error: errorMessage(error) }, `${what} failed, retrying`);
        await clock.sleep(FIRST_BACKOFF_MS * 2 ** n);
      }
    }
  };

  const refuse = (code: 'workload-identity-mismatch' | 'workload-group-not-found' | 'workload-entry-not-found', message: string): never => {
    errors.inc();
    log.error({ code }, message);
    throw new MeshError(code, message);
  };

  /** Marks the entry connected to this instance; false when a newer connect is written already. */
  const markConnected = async (namespace: string, name: string, at: number): Promise<boolean> => {
    const api = await client();
    for (let n = 0; n < MAX_ATTEMPTS; n++) {
      const entry = await api.getEntry(namespace, name);
      if (!entry) return refuse('workload-entry-not-found', `failed updating WorkloadEntry ${namespace}/${name}: WorkloadEntry not found`);
      const latest = connectedAtOf(entry);
      if (latest !== undefined && at < latest) return false;
      const result = await api.updateEntry(withConnected(entry, instanceId, at));
      if (result === 'updated') return true;
      if (result === 'gone') return refuse('workload-entry-not-found', `failed updating WorkloadEntry ${namespace}/${name}: WorkloadEntry not found`);
    }
    errors.inc();
    throw new MeshError('workload-entry-write-failed', `failed updating WorkloadEntry ${namespace}/${name}: it kept changing`);
  };

  const register = async (name: string, workload: ConnectedWorkload): Promise<void> => {
    const api = await client();
    const fields = { namespace: workload.namespace, name, proxy: workload.proxyId };
    const existing = await api.getEntry(workload.namespace, name);
    if (!existing) {
      const group = await api.getGroup(workload.namespace, workload.autoRegisterGroup ?? '');
      if (!group) {
        return refuse(
          'workload-group-not-found',
          `auto-registration WorkloadEntry of ${workload.proxyId} failed: cannot find WorkloadGroup ${workload.namespace}/${workload.autoRegisterGroup ?? ''}`,
        );
      }
      const entry = buildEntryFromGroup(name, workload, group, api.apiVersion);
      const mismatch = identityMismatch(workload, workload.namespace, entry.spec.serviceAccount);
      if (mismatch) return refuse('workload-identity-mismatch', mismatch);
      if ((await api.createEntry(withConnected(entry, instanceId, workload.connectedAt))) === 'created') {
        metrics.counter('auto_registration_success_total').inc();
        log.info({ ...fields, healthChecks: acceptsHealthReports(entry) }, 'auto-registered WorkloadEntry');
        return;
      }
      // Created meanwhile (a reconnect racing, another daemon): claim it as an existing one.
    }
    const current = existing ?? (await api.getEntry(workload.namespace, name));
    if (current) {
      const mismatch = identityMismatch(workload, current.metadata.namespace ?? workload.namespace, current.spec.serviceAccount);
      if (mismatch) return refuse('workload-identity-mismatch', mismatch);
    }
    if (await markConnected(workload.namespace, name, workload.connectedAt)) {
      metrics.counter('auto_registration_updates_total').inc();
      log.info(fields, 'updated auto-registered WorkloadEntry');
    }
  };

  const cleanup = async (entry: WorkloadEntryObject): Promise<void> => {
    const api = await client();
    const namespace = entry.metadata.namespace ?? '';
    const fields = { namespace, name: entry.metadata.name };
    if (isAutoRegistered(entry)) {
      const result = await api.deleteEntry(namespace, entry.metadata.name, entry.metadata.resourceVersion);
      if (result === 'conflict') {
        errors.inc();
        log.warn(fields, 'auto-registered WorkloadEntry changed before its cleanup, kept');
        return;
      }
      metrics.counter('auto_registration_deletes_total').inc();
      log.info(fields, 'cleaned up auto-registered WorkloadEntry');
      return;
    }
    if ((await api.updateStatus({ ...entry, status: withHealthCondition(entry.status, undefined) })) === 'updated') {
      log.info(fields, 'cleaned up health-checked WorkloadEntry');
    }
  };

  const cleanupIfDue = async (namespace: string, name: string): Promise<void> => {
    const entry = await (await client()).getEntry(namespace, name);
    if (entry && shouldCleanup(entry, clock.now(), options.gracePeriodMs, options.maxConnectionAgeMs)) await cleanup(entry);
  };

  const unregister = async (item: Registered, at: number): Promise<void> => {
    const { workload, entryName } = item;
    const api = await client();
    const entry = await api.getEntry(workload.namespace, entryName);
    // Not there yet (or deleted): retried, so that an entry is not left behind.
    if (!entry) throw new MeshError('workload-entry-not-found', `WorkloadEntry ${workload.namespace}/${entryName} is not found`);
    if (!mayMarkDisconnected(entry, instanceId, workload.connectedAt, at)) return;
    const result = await api.updateEntry(withDisconnected(entry, at));
    if (result !== 'updated') throw new MeshError('workload-entry-write-failed', `disconnect: WorkloadEntry ${workload.namespace}/${entryName}: ${result}`);
    if (item.autoCreated) metrics.counter('auto_registration_unregister_total').inc();
    log.info({ namespace: workload.namespace, name: entryName, proxy: workload.proxyId }, 'WorkloadEntry disconnected');
    const timer = clock.setTimer(() => {
      timers.delete(timer);
      background(retrying('WorkloadEntry cleanup', { namespace: workload.namespace, name: entryName }, () => cleanupIfDue(workload.namespace, entryName)));
    }, options.gracePeriodMs);
    timers.add(timer);
  };

  const writeHealth = async (item: Registered, condition: StatusCondition): Promise<void> => {
    const api = await client();
    const { workload, entryName } = item;
    for (let n = 0; n < MAX_ATTEMPTS; n++) {
      const entry = await api.getEntry(workload.namespace, entryName);
      if (!entry)
        throw new MeshError('workload-entry-not-found', `failed to update health status for ${workload.proxyId}: WorkloadEntry ${entryName} not found`);
      // Another daemon holds the workload now; or no health checks asked; or a newer report is written.
      if (!isControlledHere(entry) || !acceptsHealthReports(entry) || !isNewerReport(entry.status, condition)) return;
      const result = await api.updateStatus({ ...entry, status: withHealthCondition(entry.status, condition) });
      if (result === 'updated') {
        log.debug({ namespace: workload.namespace, name: entryName, healthy: condition.status }, 'updated health status');
        return;
      }
      if (result === 'gone') return;
    }
    throw new MeshError('workload-entry-write-failed', `health of WorkloadEntry ${workload.namespace}/${entryName}: it kept changing`);
  };

  const isControlledHere = (entry: WorkloadEntryObject): boolean => entry.metadata.annotations?.[WORKLOAD_ENTRY_ANNOTATIONS.workloadController] === instanceId;

  const sweep = async (): Promise<void> => {
    const api = await client();
    const now = clock.now();
    for (const entry of await api.listEntries()) {
      if (!shouldCleanup(entry, now, options.gracePeriodMs, options.maxConnectionAgeMs)) continue;
      await retrying('WorkloadEntry cleanup', { namespace: entry.metadata.namespace, name: entry.metadata.name }, () => cleanup(entry));
    }
  };

  const sweeper: Runnable = {
    name: 'workload-entry-cleanup',
    needLeaderElection: () => true,
    async start(signal) {
      const intervalMs = Math.max(1, 10 * options.gracePeriodMs);
      while (!signal.aborted) {
        try {
          await clock.sleep(intervalMs, signal);
        } catch {
          return;
        }
        await sweep().catch((error: unknown) => log.warn({ error: errorMessage(error) }, 'WorkloadEntry sweep failed'));
      }
    },
  };
  const timerOwner: Runnable = {
    name: 'workload-entry-timers',
    async start(signal) {
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      for (const timer of timers) timer.cancel();
      timers.clear();
      await Promise.allSettled([...pending]);
    },
  };

  return {
    async connect(connectionId, workload) {
      let entryName: string | undefined;
      let autoCreated = false;
      if (options.autoRegistration && workload.autoRegisterGroup) {
        if (workload.ips.length === 0 || workload.namespace === '') {
          return refuse('workload-group-not-found', `auto-registration of ${workload.proxyId} failed: missing IP addresses or namespace`);
        }
        entryName = autoRegisteredEntryName(workload.autoRegisterGroup, workload.ips[0] ?? '', workload.network);
        autoCreated = true;
      } else if (options.healthChecks && workload.workloadEntry) {
        const entry = await (await client()).getEntry(workload.namespace, workload.workloadEntry);
        if (!entry) {
          throw new MeshError(
            'workload-entry-not-found',
            `proxy metadata indicates that it must correspond to an existing WorkloadEntry, however WorkloadEntry ${workload.namespace}/${workload.workloadEntry} is not found`,
          );
        }
        if (acceptsHealthReports(entry)) {
          const mismatch = identityMismatch(workload, entry.metadata.namespace ?? workload.namespace, entry.spec.serviceAccount);
          if (mismatch) return refuse('workload-identity-mismatch', mismatch);
          entryName = entry.metadata.name;
        }
      }
      if (entryName === undefined) return;
      const item: Registered = { workload, entryName, autoCreated, key: [workload.network ?? '', workload.ips[0], entryName, workload.namespace].join('~') };
      if (autoCreated) await register(entryName, workload);
      else if (await markConnected(workload.namespace, entryName, workload.connectedAt)) {
        log.info({ namespace: workload.namespace, name: entryName, proxy: workload.proxyId }, 'updated health-checked WorkloadEntry');
      }
      registered.set(connectionId, item);
      streams.set(item.key, (streams.get(item.key) ?? 0) + 1);
    },

    disconnect(connectionId, at) {
      const item = registered.get(connectionId);
      if (!item) return;
      registered.delete(connectionId);
      const left = (streams.get(item.key) ?? 1) - 1;
      if (left > 0) {
        streams.set(item.key, left);
        return;
      }
      streams.delete(item.key);
      background(retrying('WorkloadEntry disconnect', { namespace: item.workload.namespace, name: item.entryName }, () => unregister(item, at)));
    },

    reportHealth(connectionId, report) {
      if (!options.healthChecks) return;
      const item = registered.get(connectionId);
      if (!item) {
        log.debug({ connection: connectionId }, 'health report of a stream without a WorkloadEntry, ignored');
        return;
      }
      const condition = buildHealthCondition(report.healthy, report.message, clock.now());
      const chainKey = `${item.workload.namespace}/${item.entryName}`;
      const next = (healthChains.get(chainKey) ?? Promise.resolve()).then(() =>
        retrying('WorkloadEntry health update', { namespace: item.workload.namespace, name: item.entryName }, () => writeHealth(item, condition)),
      );
      healthChains.set(chainKey, next);
      background(next.finally(() => healthChains.get(chainKey) === next && healthChains.delete(chainKey)));
    },

    sweep,
    settled: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    runnables: [sweeper, timerOwner],
  };
}
