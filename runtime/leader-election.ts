import type { ConfigurationOptions, CoordinationV1Api, KubeConfig, Observable, ObservableMiddleware, V1Lease, V1LeaseSpec } from '@kubernetes/client-node';
import type { Clock } from './clock.js';
import { MeshError, errorMessage } from './errors.js';
import type { Logger } from './log/logger.js';

/** client-go's leader election on a `coordination.k8s.io/v1` Lease. */
export interface LeaderElectorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name: every candidate of one election uses the same. */
  name: string;
  /** This candidate's identity (unique: a pod name plus a random suffix). */
  identity: string;
  /**
   * How long a non-leader waits after the last observed change before taking over. Default 15 s.
   * Written to the Lease in whole seconds (rounded up).
   */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failing renewal before it gives up. Default 10 s. */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs?: number;
  /** Acquire attempts wait retryPeriod * (1 + random * jitterFactor). Default 1.2, as client-go. */
  jitterFactor?: number;
  clock: Clock;
  log: Logger;
  /** On stop, hand the lease back so another candidate takes over at once. Default true. */
  releaseOnCancel?: boolean;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  /** Called when a different holder is observed (ours included). */
  onNewLeader?: (identity: string) => void;
}

export interface LeaderElector {
  readonly identity: string;
  /**
   * Campaigns until it acquires the lease, then renews it until the signal aborts (releasing it
   * if `releaseOnCancel`) or a renewal fails for `renewDeadline`. Resolves when it no longer leads;
   * may then be called again to campaign for another term.
   */
  run(signal: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /** The last observed holder ('' if none). */
  getLeader(): string;
  /** Adds a listener for the start of leadership; returns the function that removes it. */
  onStartedLeading(listener: () => void): () => void;
  /** Adds a listener for the end of leadership (lost, or given up at stop). */
  onStoppedLeading(listener: () => void): () => void;
}

interface ObservedLease {
  lease: V1Lease;
  holder: string;
  leaseDurationMs: number;
  /** The record as compared between reads (client-go compares the raw record). */
  record: string;
}

const HTTP_NOT_FOUND = 404;
const HTTP_CONFLICT = 409;

export function newLeaderElector(options: LeaderElectorOptions): LeaderElector {
  const { namespace, name, identity, clock, log } = options;
  const leaseDurationMs = options.leaseDurationMs ?? 15_000;
  const renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
  const retryPeriodMs = options.retryPeriodMs ?? 2_000;
  const jitterFactor = options.jitterFactor ?? 1.2;
  const releaseOnCancel = options.releaseOnCancel ?? true;
  validate({ leaseDurationMs, renewDeadlineMs, retryPeriodMs, jitterFactor, identity, name, namespace });
  const leaseDurationSeconds = Math.ceil(leaseDurationMs / 1000);

  const startedListeners = new Set<() => void>();
  const stoppedListeners = new Set<() => void>();
  if (options.onStartedLeading) startedListeners.add(options.onStartedLeading);
  if (options.onStoppedLeading) stoppedListeners.add(options.onStoppedLeading);

  let observed: ObservedLease | undefined;
  // Local time of the last observed change: expiry is judged on our clock, never the holder's.
  let observedTime = 0;
  let leading = false;
  let running = false;
  let api: CoordinationV1Api | undefined;
  let microTime: (ms: number) => Date = (ms) => new Date(ms);
  let signalOptions: (signal: AbortSignal) => ConfigurationOptions = () => ({});

  const fields = { lease: `${namespace}/${name}`, identity };

  const setObserved = (lease: V1Lease): void => {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder !== (observed?.holder ?? '') && holder !== '') options.onNewLeader?.(holder);
    observed = {
      lease,
      holder,
      leaseDurationMs: (spec.leaseDurationSeconds ?? 0) * 1000,
      record: recordOf(spec),
    };
    observedTime = clock.now();
  };

  const isLeaseValid = (now: number): boolean => observed !== undefined && observedTime + observed.leaseDurationMs > now;

  const withTimeout = async <T>(timeoutMs: number, outer: AbortSignal | undefined, call: (opts: ConfigurationOptions) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(outer?.reason);
    outer?.addEventListener('abort', onAbort, { once: true });
    if (outer?.aborted) onAbort();
    const timer = clock.setTimer(() => controller.abort(new MeshError('lease-request-timeout', `lease request timed out after ${timeoutMs}ms`)), timeoutMs);
    try {
      return await call(signalOptions(controller.signal));
    } finally {
      timer.cancel();
      outer?.removeEventListener('abort', onAbort);
    }
  };

  /** Our record: a renewal keeps the acquire time and count; a change of holder counts a transition. */
  const specFor = (now: number, previous: V1LeaseSpec | undefined, renewal: boolean): V1LeaseSpec => ({
    holderIdentity: identity,
    leaseDurationSeconds,
    // Kept as read back (a string with microseconds) so the holder's acquire time never drifts.
    acquireTime: renewal && previous?.acquireTime ? previous.acquireTime : microTime(now),
    renewTime: microTime(now),
    leaseTransitions: (previous?.leaseTransitions ?? 0) + (renewal ? 0 : 1),
  });

  const replace = (lease: V1Lease, spec: V1LeaseSpec, timeoutMs: number, signal?: AbortSignal): Promise<V1Lease> =>
    withTimeout(timeoutMs, signal, (opts) => (api as CoordinationV1Api).replaceNamespacedLease({ name, namespace, body: { ...lease, spec } }, opts));

  /** One attempt (client-go's tryAcquireOrRenew). True when we hold the lease afterwards. */
  const tryAcquireOrRenew = async (timeoutMs: number, signal: AbortSignal): Promise<boolean> => {
    const now = clock.now();
    const client = api as CoordinationV1Api;

    // Fast path: we lead and our view is fresh, so renew from the cached object.
    if (observed && observed.holder === identity && isLeaseValid(now)) {
      try {
        setObserved(await replace(observed.lease, specFor(now, observed.lease.spec, true), timeoutMs, signal));
        return true;
      } catch (error) {
        log.debug({ ...fields, error: errorMessage(error) }, 'lease fast-path renewal failed, re-reading');
      }
    }

    let current: V1Lease;
    try {
      current = await withTimeout(timeoutMs, signal, (opts) => client.readNamespacedLease({ name, namespace }, opts));
    } catch (error) {
      if (statusOf(error) !== HTTP_NOT_FOUND) {
        log.warn({ ...fields, error: errorMessage(error) }, 'cannot read lease');
        return false;
      }
      const body: V1Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: specFor(now, undefined, true),
      };
      try {
        setObserved(await withTimeout(timeoutMs, signal, (opts) => client.createNamespacedLease({ namespace, body }, opts)));
        return true;
      } catch (createError) {
        const level = statusOf(createError) === HTTP_CONFLICT ? 'debug' : 'warn';
        log[level]({ ...fields, error: errorMessage(createError) }, 'cannot create lease');
        return false;
      }
    }

    const spec = current.spec ?? {};
    if (!observed || observed.record !== recordOf(spec)) setObserved(current);
    else observed = { ...observed, lease: current };
    const holder = spec.holderIdentity ?? '';
    if (holder !== '' && holder !== identity && isLeaseValid(now)) {
      log.debug({ ...fields, holder }, 'lease is held by another candidate and has not yet expired');
      return false;
    }

    try {
      // A conflict (409) means another candidate wrote first: retry after the retry period.
      setObserved(await replace(current, specFor(now, spec, holder === identity), timeoutMs, signal));
      return true;
    } catch (error) {
      const level = statusOf(error) === HTTP_CONFLICT ? 'debug' : 'warn';
      log[level]({ ...fields, error: errorMessage(error) }, 'cannot update lease');
      return false;
    }
  };

  const acquire = async (signal: AbortSignal): Promise<boolean> => {
    log.info(fields, 'attempting to acquire leader lease');
    while (!signal.aborted) {
      if (await tryAcquireOrRenew(renewDeadlineMs, signal)) {
        log.info(fields, 'successfully acquired lease');
        return true;
      }
      const waitMs = retryPeriodMs * (1 + Math.random() * jitterFactor);
      if (!(await sleepUnlessAborted(clock, waitMs, signal))) return false;
    }
    return false;
  };

  /** Renews every retry period; false when a renewal kept failing past the renew deadline. */
  const renewLoop = async (signal: AbortSignal): Promise<boolean> => {
    for (;;) {
      if (!(await sleepUnlessAborted(clock, retryPeriodMs, signal))) return true;
      const deadline = clock.now() + renewDeadlineMs;
      let renewed = false;
      for (;;) {
        const remaining = deadline - clock.now();
        if (remaining <= 0) break;
        if (await tryAcquireOrRenew(remaining, signal)) {
          renewed = true;
          break;
        }
        if (signal.aborted) return true;
        if (deadline - clock.now() <= retryPeriodMs) break;
        if (!(await sleepUnlessAborted(clock, retryPeriodMs, signal))) return true;
      }
      if (!renewed) return false;
    }
  };

  const release = async (): Promise<void> => {
    if (!observed || observed.holder !== identity) return;
    const now = clock.now();
    const spec: V1LeaseSpec = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: observed.lease.spec?.leaseTransitions ?? 0,
    };
    try {
      // One retry period at most: an unreleased lease merely expires, and shutdown is bounded.
      setObserved(await replace(observed.lease, spec, retryPeriodMs));
      log.info(fields, 'released leader lease');
    } catch (error) {
      log.warn({ ...fields, error: errorMessage(error) }, 'cannot release leader lease');
    }
  };

  const notify = (listeners: Set<() => void>): void => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        log.error({ ...fields, error: errorMessage(error) }, 'leader election listener failed');
      }
    }
  };

  /** One term: campaign until the lease is ours, then renew it until the signal or a failed renewal. */
  const campaign = async (signal: AbortSignal): Promise<void> => {
    if (!api) {
      const k8s = await import('@kubernetes/client-node');
      api = options.kubeConfig.makeApiClient(k8s.CoordinationV1Api);
      microTime = (ms) => new k8s.V1MicroTime(ms);
      signalOptions = (requestSignal) => attachSignal(requestSignal, k8s.Observable);
    }
    if (!(await acquire(signal))) return;
    leading = true;
    notify(startedListeners);
    const stoppedByUs = await renewLoop(signal);
    leading = false;
    if (stoppedByUs) {
      if (releaseOnCancel) await release();
    } else {
      log.error({ ...fields, renewDeadlineMs }, 'failed to renew lease, leadership lost');
    }
    notify(stoppedListeners);
  };

  return {
    identity,

    async run(signal: AbortSignal): Promise<void> {
      if (running) throw new MeshError('already-started', `leader elector ${identity}: run() called while it runs`);
      running = true;
      try {
        await campaign(signal);
      } finally {
        running = false;
      }
    },

    isLeader: () => leading,

    getLeader: () => observed?.holder ?? '',

    onStartedLeading(listener) {
      startedListeners.add(listener);
      return () => startedListeners.delete(listener);
    },

    onStoppedLeading(listener) {
      stoppedListeners.add(listener);
      return () => stoppedListeners.delete(listener);
    },
  };
}

function validate(v: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  jitterFactor: number;
  identity: string;
  name: string;
  namespace: string;
}): void {
  const fail = (message: string): never => {
    throw new MeshError('invalid-leader-election', `leader election: ${message}`);
  };
  if (!v.identity) fail('identity must not be empty');
  if (!v.name || !v.namespace) fail('lease name and namespace must not be empty');
  if (v.retryPeriodMs <= 0) fail('retryPeriod must be positive');
  if (v.leaseDurationMs <= v.renewDeadlineMs) fail('leaseDuration must be greater than renewDeadline');
  if (v.renewDeadlineMs <= v.jitterFactor * v.retryPeriodMs) fail('renewDeadline must be greater than jitterFactor * retryPeriod');
}

/** Middleware that attaches an abort signal to the request (client-node has no timeout option). */
function attachSignal(signal: AbortSignal, ObservableClass: typeof Observable): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new ObservableClass(Promise.resolve(context));
    },
    post: (response) => new ObservableClass(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** The record fields client-go compares; times read back as strings, written as Dates. */
function recordOf(spec: V1LeaseSpec): string {
  return JSON.stringify([
    spec.holderIdentity ?? '',
    spec.leaseDurationSeconds ?? 0,
    timeString(spec.acquireTime),
    timeString(spec.renewTime),
    spec.leaseTransitions ?? 0,
  ]);
}

function timeString(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' ? value : '';
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** Sleeps on the clock; false when the signal aborted first. */
async function sleepUnlessAborted(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await clock.sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}
