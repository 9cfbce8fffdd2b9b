import type { Clock, Logger } from '../../runtime/index.js';
import { newDebouncer } from '../debouncer.js';
import { ENDPOINT_TYPE, PUSH_ORDER } from '../envoy/type-urls.js';
import { mergePushRequests, pushRequestOf, type PushRequest } from './push-request.js';
import { newPushFindingsLedger, type PushCondition, type PushFindingsLedger } from './push-findings.js';
import { newPushQueue } from './push-queue.js';
import type { PushSnapshot, PushStatus } from './push-snapshot.js';
import { startPushWorkers, type PushWorkers } from './push-workers.js';
import type { ResponseSender } from '../response-sender.js';
import type { XdsCallbacks } from '../xds-callbacks.js';
import { subscriptionOf } from '../watch-state.js';
import type { XdsConnection } from '../xds-connection.js';
import { errorMessage } from '../../runtime/index.js';

export interface PushPipelineOptions<C> {
  /** Builds the immutable push context of a push from the previous one (undefined at first). */
  buildPushContext: (previous: C | undefined, request: PushRequest) => C | Promise<C>;
  /** The streams a push goes to. */
  connections: () => readonly XdsConnection[];
  /** The conditions a context holds whatever the proxy: they seed each snapshot's findings. */
  findingsOf?: (context: C) => Iterable<readonly [PushCondition, string]>;
  /** Called with each context built under a new version (full pushes). */
  onNewVersion?: (snapshot: PushSnapshot<C>) => void;
  sender: ResponseSender<C>;
  /** PILOT_DEBOUNCE_AFTER. */
  debounceAfterMs: number;
  /** PILOT_DEBOUNCE_MAX. */
  debounceMaxMs: number;
  /** PILOT_ENABLE_EDS_DEBOUNCE. */
  enableEdsDebounce: boolean;
  /** PILOT_PUSH_THROTTLE. */
  pushThrottle: number;
  clock: Clock;
  callbacks: XdsCallbacks;
  /** The `ads` scope. */
  log: Logger;
}

/** Config changes in, pushes out: the debouncer, the push contexts and the per-connection push queue with its workers. */
export interface PushPipeline<C> {
  configUpdate(request: PushRequest): void;
  /** Starts the push workers (PILOT_PUSH_THROTTLE of them). */
  startWorkers(): void;
  /** Stops debouncing and pushing; resolves when the running pushes have finished. */
  stop(): Promise<void>;
  /** The push context in effect, built on first use. */
  currentPush(): Promise<PushSnapshot<C>>;
  /** The push context in effect, if one was built. */
  current(): PushSnapshot<C> | undefined;
  lastPush(): PushStatus | undefined;
  /** Connections waiting in the push queue. */
  pendingPushes(): number;
  /** Drops a closed connection's pending push. */
  remove(con: XdsConnection): void;
}

type QueueItem<C> = { request: PushRequest; push: PushSnapshot<C>; enqueuedAt: number };

export function newPushPipeline<C>(options: PushPipelineOptions<C>): PushPipeline<C> {
  const { clock, callbacks, log, sender } = options;
  let current: PushSnapshot<C> | undefined;
  let building: Promise<unknown> = Promise.resolve();
  let initial: Promise<PushSnapshot<C>> | undefined;
  let seq = 0;
  let versionCounter = 0;
  let lastPushStatus: PushStatus | undefined;
  let workers: PushWorkers | undefined;

  const queue = newPushQueue<XdsConnection, QueueItem<C>>((older, newer) => ({
    request: mergePushRequests(older.request, newer.request),
    push: newer.push.seq >= older.push.seq ? newer.push : older.push,
    enqueuedAt: Math.min(older.enqueuedAt, newer.enqueuedAt),
  }));

  /** A condition found for a new key counts at once; those that went count once the push has reached the proxies. */
  const onNewFinding = (condition: PushCondition, count: number): void => callbacks.onFinding?.(condition, count);
  const publishFindings = (snapshot: PushSnapshot<C>): void => {
    for (const [condition, count] of snapshot.findings.counts()) callbacks.onFinding?.(condition, count);
  };

  /** A failing check is a bug: logged, and the push goes on without its findings. */
  const contextFindings = (context: C): Iterable<readonly [PushCondition, string]> => {
    try {
      return [...(options.findingsOf?.(context) ?? [])];
    } catch (error) {
      log.error({ error: errorMessage(error) }, 'cannot check the push context; its health gauges miss this push');
      return [];
    }
  };

  const nextVersion = (): string => {
    const time = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    return `${time}/${++versionCounter}`;
  };

  /** Builds contexts one at a time, each from the one before. */
  const buildSnapshot = (request: PushRequest): Promise<PushSnapshot<C>> => {
    const result = building.then(async () => {
      const previous = current;
      const context = await options.buildPushContext(previous?.context, request);
      const full = request.full || !previous;
      const fromContext = contextFindings(context);
      const findings: PushFindingsLedger = previous ? previous.findings.next(full, fromContext) : newPushFindingsLedger(fromContext, onNewFinding);
      const snapshot: PushSnapshot<C> = {
        seq: ++seq,
        version: full ? nextVersion() : previous.version,
        context,
        request,
        builtAt: clock.now(),
        findings,
      };
      sender.invalidate(full ? 'all' : request.configsUpdated);
      current = snapshot;
      if (snapshot.version !== previous?.version) options.onNewVersion?.(snapshot);
      return snapshot;
    });
    building = result.catch(() => undefined);
    return result;
  };

  const push = async (request: PushRequest): Promise<void> => {
    callbacks.onPush?.(request);
    let snapshot: PushSnapshot<C>;
    try {
      snapshot = await buildSnapshot(request);
    } catch (error) {
      callbacks.onPushContextError?.(error);
      log.error({ error: errorMessage(error) }, 'cannot build the push context; the previous one stays');
      return;
    }
    const enqueuedAt = clock.now();
    const connections = [...options.connections()];
    if (connections.length === 0) publishFindings(snapshot);
    for (const con of connections) queue.enqueue(con, { request, push: snapshot, enqueuedAt });
    lastPushStatus = {
      version: snapshot.version,
      full: request.full,
      reasons: Object.fromEntries(request.reasons),
      configsUpdated: request.configsUpdated.slice(0, 100),
      triggeredAt: request.startedAt,
      contextBuiltAt: snapshot.builtAt,
      proxiesQueued: connections.length,
    };
    log.debug({ version: snapshot.version, full: request.full, proxies: connections.length }, 'push');
  };

  /** The watched types in push order: CDS, EDS, LDS, RDS, SDS, then the rest with a generator. */
  const pushTypes = (con: XdsConnection): string[] => {
    const known = PUSH_ORDER.filter((typeUrl) => con.watches.has(typeUrl));
    const others = [...con.watches.keys()].filter((typeUrl) => !PUSH_ORDER.includes(typeUrl) && sender.generates(typeUrl)).sort();
    return [...known, ...others];
  };

  const pushConnection = async (con: XdsConnection, item: QueueItem<C>): Promise<void> => {
    callbacks.onPushDequeued?.(con, clock.now() - item.enqueuedAt);
    await con.run(async () => {
      if (con.closed) return;
      // The newest context: a push queued behind a newer one must not send older config.
      const snapshot = current && current.seq > item.push.seq ? current : item.push;
      for (const typeUrl of pushTypes(con)) {
        if (con.closed) return;
        if (!item.request.full && typeUrl !== ENDPOINT_TYPE) continue;
        const watch = con.watch(typeUrl);
        if (!watch) continue;
        await sender.respond(con, typeUrl, snapshot, { ...item.request, ...subscriptionOf(watch) }, { always: false, forceAll: false });
      }
      con.recordPushVersion(snapshot.version);
      callbacks.onPushDone?.(con, clock.now() - item.request.startedAt);
      // Once the queue has drained, every proxy has had this push: what it no longer finds has gone.
      if (snapshot === current && queue.pending() === 0) publishFindings(snapshot);
    });
  };

  const debouncer = newDebouncer({
    clock,
    debounceAfterMs: options.debounceAfterMs,
    debounceMaxMs: options.debounceMaxMs,
    enableEdsDebounce: options.enableEdsDebounce,
    push,
    log,
  });

  return {
    configUpdate: (request) => debouncer.add(request),
    startWorkers() {
      if (workers) return;
      workers = startPushWorkers(queue, options.pushThrottle, pushConnection, log);
    },
    async stop() {
      debouncer.stop();
      queue.shutDown();
      await workers?.done;
    },
    currentPush() {
      if (current) return Promise.resolve(current);
      initial ??= buildSnapshot(pushRequestOf({ full: true, reason: 'unknown', startedAt: clock.now() }))
        .catch((error: unknown) => {
          callbacks.onPushContextError?.(error);
          throw error;
        })
        .finally(() => (initial = undefined));
      return initial;
    },
    current: () => current,
    lastPush: () => lastPushStatus,
    pendingPushes: () => queue.pending(),
    remove: (con) => queue.remove(con),
  };
}
