import type { Clock, TimerHandle } from './clock.js';
import { MeshError, errorMessage } from './errors.js';
import { newInformerStore } from './informer-store.js';
import { isResourceExpired, listAll, needsRelist, watchOnce } from './kube-list-watch.js';
import type { KubeList, KubeTransport, KubeWatchEvent } from './kube-list-watch.js';
import type { Logger } from './log/logger.js';
import { newRestartBackoff } from './restart-backoff.js';
import type { RestartBackoffOptions } from './restart-backoff.js';
import type { KubeObject, Source, SourceEvent, SourceHandler } from './source.js';
import { settledOrAborted } from './until-aborted.js';

export type { KubeList, KubeTransport } from './kube-list-watch.js';
export type { RestartBackoffOptions } from './restart-backoff.js';

export interface InformerBackoffOptions extends RestartBackoffOptions {
  /** A watch open this long counts as healthy: the backoff starts again from `initialMs`. Default 60 s. */
  resetAfterMs?: number;
}

export interface InformerSourceOptions<T extends KubeObject> {
  /** For logs and errors, e.g. `peerauthentications`. */
  name: string;
  /** A client-node KubeConfig (or anything with its transport methods). */
  kubeConfig: KubeTransport;
  /** The collection across all namespaces: `/api/v1/namespaces`, `/apis/security.mesh.io/v1beta1/peerauthentications`. */
  path: string;
  /** Replaces the built-in paged list of `path`; it must honour the selectors itself. */
  listFn?: (signal: AbortSignal) => Promise<KubeList<T>>;
  labelSelector?: string;
  fieldSelector?: string;
  log: Logger;
  clock: Clock;
  backoff?: InformerBackoffOptions;
  /** Re-emits `apply` for every stored object this often (controller-runtime resync). Off when absent or 0. */
  resyncMs?: number;
  /** Items per list page. Default 500; 0 lists everything in one response. */
  pageSize?: number;
  /** The server ends each watch after this long (asked with `timeoutSeconds`). Default: 5 to 10 min at random. */
  watchTimeoutSeconds?: number;
  /** A list (all its pages) taking longer is abandoned and retried. Default 60 s. */
  listTimeoutMs?: number;
}

/**
 * A `Source` over the Kubernetes list/watch protocol, with client-go reflector behaviour.
 *
 * client-node's `ListWatch` informer is not used: it stops for good after any error other than
 * 410, has no signal for "first list stored", and applies a relist object by object. This loop
 * lists, stores the snapshot atomically, watches from its resource version, and after any
 * failure watches again (or relists, after 410 Gone or an unreadable event) after an
 * exponential backoff, until the signal aborts.
 *
 * `subscribe` replays the current store as `apply` events before live ones (as
 * controller-runtime does for a handler added to a running informer), so a level-based
 * controller sees every object however late it subscribes.
 */
export function newInformerSource<T extends KubeObject>(options: InformerSourceOptions<T>): Source<T> {
  const { name, kubeConfig, path, log, clock } = options;
  const store = newInformerStore<T>();
  const subscribers: SourceHandler<T>[] = [];
  let started = false;
  let synced = false;
  let markSynced!: () => void;
  let markStopped!: (error: unknown) => void;
  const syncedPromise = new Promise<void>((resolve, reject) => {
    markSynced = resolve;
    markStopped = reject;
  });
  // Waiting is optional, so a source stopped before sync must not raise an unhandled rejection.
  syncedPromise.catch(() => undefined);

  const notify = (handler: SourceHandler<T>, event: SourceEvent<T>): void => {
    try {
      handler(event);
    } catch (error) {
      log.error({ source: name, event: event.type, error: errorMessage(error) }, 'subscriber failed');
    }
  };
  const emit = (events: readonly SourceEvent<T>[]): void => {
    if (events.length === 0) return;
    for (const handler of subscribers.slice()) {
      for (const event of events) notify(handler, event);
    }
  };

  const list = async (signal: AbortSignal): Promise<KubeList<T>> => {
    if (options.listFn) return options.listFn(signal);
    return listAll<T>(kubeConfig, path, {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      pageSize: options.pageSize ?? 500,
      signal,
    });
  };

  const onWatchEvent = (event: KubeWatchEvent<T>): void => {
    if (event.type === 'BOOKMARK') return;
    const change = event.type === 'DELETED' ? store.delete(event.object) : store.apply(event.object);
    if (change) emit([change]);
  };

  const run = async (signal: AbortSignal): Promise<void> => {
    const backoff = newRestartBackoff(options.backoff);
    const resetAfterMs = options.backoff?.resetAfterMs ?? 60_000;
    let needList = true;
    let resourceVersion = '';
    let failures = 0;
    while (!signal.aborted) {
      const attempt = new AbortController();
      const abortAttempt = (): void => attempt.abort(signal.reason);
      signal.addEventListener('abort', abortAttempt, { once: true });
      let deadline: TimerHandle | undefined;
      const setDeadline = (ms: number, what: string): void => {
        deadline?.cancel();
        deadline = clock.setTimer(() => attempt.abort(new MeshError('informer-timeout', `${name}: ${what} took longer than ${ms} ms`)), ms);
      };
      let openedAt: number | undefined;
      let outcome: 'closed' | 'expired' | 'failed';
      let failure: unknown;
      try {
        if (needList) {
          setDeadline(options.listTimeoutMs ?? 60_000, 'list');
          const listed = await list(attempt.signal);
          resourceVersion = listed.metadata?.resourceVersion ?? '';
          needList = false;
          emit(store.replace(withTypeMeta(listed)));
          log.debug({ source: name, objects: listed.items.length, resourceVersion }, 'listed');
          if (!synced) {
            synced = true;
            markSynced();
            log.info({ source: name, objects: listed.items.length }, 'synced');
          }
        }
        const timeoutSeconds = options.watchTimeoutSeconds ?? Math.floor(300 + Math.random() * 300);
        setDeadline((timeoutSeconds + 30) * 1000, 'watch');
        await watchOnce<T>(
          kubeConfig,
          path,
          {
            resourceVersion,
            allowWatchBookmarks: 'true',
            timeoutSeconds: String(timeoutSeconds),
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
          },
          attempt.signal,
          {
            onOpen: () => {
              openedAt = clock.now();
              log.debug({ source: name, resourceVersion }, 'watching');
            },
            onEvent: (event) => {
              resourceVersion = event.object.metadata?.resourceVersion || resourceVersion;
              onWatchEvent(event);
            },
          },
        );
        outcome = 'closed';
      } catch (error) {
        if (signal.aborted) break;
        failure = attempt.signal.aborted ? attempt.signal.reason : error;
        if (isResourceExpired(error)) {
          outcome = 'expired';
          needList = true;
        } else {
          outcome = 'failed';
          // As client-go: a dropped connection or a 5xx re-watches from the last resource
          // version, whose replay loses nothing; an unreadable event or a 4xx needs a relist.
          if (needsRelist(error)) needList = true;
        }
      } finally {
        deadline?.cancel();
        signal.removeEventListener('abort', abortAttempt);
      }

      const healthy = openedAt !== undefined && clock.now() - openedAt >= resetAfterMs;
      if (healthy) {
        backoff.reset();
        failures = 0;
      }
      // A watch the server ended after a healthy while is routine: reconnect at once.
      if (outcome === 'closed' && healthy) continue;
      const delayMs = backoff.next();
      if (outcome === 'failed') {
        failures++;
        log.warn({ source: name, error: errorMessage(failure), failures, delayMs }, 'list/watch failed, restarting');
      } else if (outcome === 'expired') {
        log.info({ source: name, delayMs }, 'resource version expired, relisting');
      } else {
        log.debug({ source: name, delayMs }, 'watch closed, reconnecting');
      }
      try {
        await clock.sleep(delayMs, signal);
      } catch {
        break;
      }
    }
  };

  function waitForSync(signal?: AbortSignal): Promise<void> {
    if (synced) return Promise.resolve();
    return settledOrAborted(syncedPromise, signal);
  }

  const startResync = (): TimerHandle | undefined => {
    const resyncMs = options.resyncMs ?? 0;
    if (resyncMs <= 0) return undefined;
    let timer: TimerHandle;
    const tick = (): void => {
      if (synced) emit(store.list().map((object) => ({ type: 'apply', object })));
      timer = clock.setTimer(tick, resyncMs);
    };
    timer = clock.setTimer(tick, resyncMs);
    return { cancel: () => timer.cancel() };
  };

  return {
    name,
    group: 'cache',

    store: {
      get: (key) => store.get(key),
      list: () => store.list(),
    },

    async start(signal: AbortSignal): Promise<void> {
      if (started) throw new MeshError('already-started', `${name} source: start() called twice`);
      started = true;
      const resync = startResync();
      log.info({ source: name, path }, 'starting');
      try {
        await run(signal);
      } finally {
        resync?.cancel();
        if (!synced) markStopped(new MeshError('stopped-before-sync', `${name} source: stopped before it synced`));
        log.info({ source: name }, 'stopped');
      }
    },

    subscribe(handler: SourceHandler<T>): () => void {
      for (const object of store.list()) notify(handler, { type: 'apply', object });
      subscribers.push(handler);
      return () => {
        const index = subscribers.indexOf(handler);
        if (index >= 0) subscribers.splice(index, 1);
      };
    },

    waitForSync,
    waitForReady: waitForSync,

    isSynced(): boolean {
      return synced;
    },
  };
}

/** List items usually lack apiVersion and kind; fill them from the list (`PodList` → `Pod`). */
function withTypeMeta<T extends KubeObject>(listed: KubeList<T>): T[] {
  const kind = listed.kind?.endsWith('List') ? listed.kind.slice(0, -'List'.length) : undefined;
  const apiVersion = listed.apiVersion;
  if (apiVersion === undefined || kind === undefined) return listed.items;
  return listed.items.map((item) =>
    item.apiVersion !== undefined && item.kind !== undefined ? item : { ...item, apiVersion: item.apiVersion ?? apiVersion, kind: item.kind ?? kind },
  );
}
