import type { ConfigObjectIndex } from './config-object-index.js';
import { MeshError, errorMessage } from '../../runtime/index.js';
import type { KubeObject, Logger, Source, SourceEvent, SourceHandler } from '../../runtime/index.js';
import type { SyncLatch } from './sync-latch.js';

/** One kind's view of the folder: a `Source` like the informer's, fed by the shared watcher. */
export interface ConfigKindSource extends Source<KubeObject> {
  /** Called by the watcher after the index already shows the new state. */
  notify(events: readonly SourceEvent<KubeObject>[]): void;
}

export interface ConfigKindSourceOptions {
  name: string;
  groupKind: string;
  index: ConfigObjectIndex;
  sync: SyncLatch;
  /** Keeps the shared watcher running until the signal aborts (see `newConfigDirSource`). */
  hold: (signal: AbortSignal) => Promise<void>;
  log: Logger;
}

export function newConfigKindSource(options: ConfigKindSourceOptions): ConfigKindSource {
  const { name, groupKind, index, sync, log } = options;
  const subscribers: SourceHandler<KubeObject>[] = [];
  let started = false;

  const deliver = (handler: SourceHandler<KubeObject>, event: SourceEvent<KubeObject>): void => {
    try {
      handler(event);
    } catch (error) {
      log.error({ source: name, event: event.type, error: errorMessage(error) }, 'subscriber failed');
    }
  };

  return {
    name,
    group: 'cache',

    store: {
      get: (key) => index.get(groupKind, key),
      list: () => index.list(groupKind),
    },

    async start(signal: AbortSignal): Promise<void> {
      if (started) throw new MeshError('already-started', `${name} source: start() called twice`);
      started = true;
      await options.hold(signal);
    },

    subscribe(handler: SourceHandler<KubeObject>): () => void {
      // As the informer source: a late subscriber first sees every stored object as `apply`.
      for (const object of index.list(groupKind)) deliver(handler, { type: 'apply', object });
      subscribers.push(handler);
      return () => {
        const at = subscribers.indexOf(handler);
        if (at >= 0) subscribers.splice(at, 1);
      };
    },

    notify(events) {
      if (events.length === 0) return;
      for (const handler of subscribers.slice()) {
        for (const event of events) deliver(handler, event);
      }
    },

    waitForSync: (signal) => sync.wait(signal),
    waitForReady: (signal) => sync.wait(signal),
    isSynced: () => sync.isSynced(),
  };
}
