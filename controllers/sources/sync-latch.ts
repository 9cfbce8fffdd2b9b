import { settledOrAborted } from '../../runtime/index.js';
/** "Has the first full list been stored?", shared by every source the folder feeds. */
export interface SyncLatch {
  isSynced(): boolean;
  markSynced(): void;
  /** Fails every waiter when the watcher stops before it synced; ignored once synced. */
  markStopped(error: unknown): void;
  /** Resolves once synced; rejects with the stop error, or the signal's reason if it aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
}

export function newSyncLatch(): SyncLatch {
  let synced = false;
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Waiting is optional: a watcher stopped before sync must not raise an unhandled rejection.
  done.catch(() => undefined);
  return {
    isSynced: () => synced,
    markSynced() {
      synced = true;
      resolve();
    },
    markStopped(error) {
      if (!synced) reject(error);
    },
    wait(signal) {
      if (synced) return Promise.resolve();
      return settledOrAborted(done, signal);
    },
  };
}
