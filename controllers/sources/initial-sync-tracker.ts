import { formatObjectKey } from '../../names/index.js';
import { objectKeyOf, settledOrAborted } from '../../runtime/index.js';
import type { KubeObject, MapFn, ObjectKey, Reconciler, Source } from '../../runtime/index.js';

/**
 * "Has the model taken in everything the sources held at start?": sources synced is not enough,
 * the reconcilers must also have run once on each object of the first list (client-go's
 * `HasSynced` for a handler). Until then a proxy would get partial config.
 */
export interface InitialSyncTracker {
  /** The reconciler, counting each key it has finished (successfully or not). */
  wrap(reconcile: Reconciler): Reconciler;
  hasSynced(): boolean;
  /** Resolves once synced; rejects with the signal's reason if it aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export interface TrackedSource {
  source: Source<KubeObject>;
  /** As the controller maps the source's objects to keys; default the object's own key. */
  mapFn?: MapFn<KubeObject>;
}

export function newInitialSyncTracker(watched: readonly TrackedSource[]): InitialSyncTracker {
  const finished = new Set<string>();
  let pending: Set<string> | undefined;
  let synced = false;
  let resolve!: () => void;
  const done = new Promise<void>((res) => (resolve = res));

  const keysOf = (watch: TrackedSource, object: KubeObject): ObjectKey[] => {
    const mapped = (watch.mapFn ?? objectKeyOf)(object);
    if (mapped === undefined) return [];
    return Array.isArray(mapped) ? [...(mapped as readonly ObjectKey[])] : [mapped as ObjectKey];
  };

  const check = (): void => {
    if (synced || pending === undefined || pending.size > 0) return;
    synced = true;
    finished.clear();
    resolve();
  };

  const mark = (key: string): void => {
    if (synced) return;
    if (pending) {
      pending.delete(key);
      check();
    } else {
      finished.add(key);
    }
  };

  for (const watch of watched) {
    // An object deleted before its first reconcile needs none.
    watch.source.subscribe((event) => {
      if (event.type === 'delete') for (const key of keysOf(watch, event.object)) mark(formatObjectKey(key));
    });
  }

  Promise.all(watched.map((watch) => watch.source.waitForSync())).then(
    () => {
      pending = new Set();
      for (const watch of watched) {
        for (const object of watch.source.store.list()) {
          for (const key of keysOf(watch, object)) {
            const id = formatObjectKey(key);
            if (!finished.has(id)) pending.add(id);
          }
        }
      }
      check();
    },
    // A source stopped before it synced: never synced.
    () => undefined,
  );

  return {
    wrap(reconcile) {
      return async (request) => {
        try {
          return await reconcile(request);
        } finally {
          mark(formatObjectKey(request.key));
        }
      };
    },
    hasSynced: () => synced,
    waitForSync(signal) {
      if (synced) return Promise.resolve();
      return settledOrAborted(done, signal);
    },
  };
}
