import { describe, expect, test } from '@jest/globals';
import { newInitialSyncTracker } from './initial-sync-tracker.js';
import { newNopLogger, objectKeyOf } from '../../runtime/index.js';
import type { KubeObject, ObjectKey, Reconciler, Source, SourceHandler } from '../../runtime/index.js';

/** A source under the test's control: `sync()` marks the first list stored, `remove()` deletes. */
function fakeSource(names: string[]): Source<KubeObject> & { sync(): void; remove(name: string): void } {
  const objects = new Map(names.map((name) => [name, { metadata: { namespace: 'ns', name } } as KubeObject]));
  const handlers: SourceHandler<KubeObject>[] = [];
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => (markSynced = resolve));
  let isSynced = false;
  return {
    name: 'fake',
    store: { get: (key) => objects.get(key.name), list: () => [...objects.values()] },
    start: async () => undefined,
    subscribe(handler) {
      handlers.push(handler);
      return () => undefined;
    },
    waitForSync: () => synced,
    isSynced: () => isSynced,
    sync() {
      isSynced = true;
      markSynced();
    },
    remove(name) {
      const object = objects.get(name);
      objects.delete(name);
      if (object) for (const handler of handlers) handler({ type: 'delete', object });
    },
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function reconcileAll(reconcile: Reconciler, keys: ObjectKey[]): Promise<unknown> {
  const signal = new AbortController().signal;
  return Promise.all(keys.map((key) => reconcile({ key, reconcileId: 'x', log: newNopLogger(), signal })));
}

describe('initial sync tracker', () => {
  test('synced once every object of the first list has been reconciled, failures included', async () => {
    const source = fakeSource(['a', 'b', 'c']);
    const tracker = newInitialSyncTracker([{ source }]);
    const reconcile = tracker.wrap(async ({ key }) => {
      if (key.name === 'c') throw new Error('failed');
    });
    await reconcileAll(reconcile, [{ namespace: 'ns', name: 'a' }]);
    source.sync();
    await settle();
    expect(tracker.hasSynced()).toBe(false);
    await reconcileAll(reconcile, [{ namespace: 'ns', name: 'b' }]);
    expect(tracker.hasSynced()).toBe(false);
    await expect(reconcileAll(reconcile, [{ namespace: 'ns', name: 'c' }])).rejects.toThrow('failed');
    expect(tracker.hasSynced()).toBe(true);
    await tracker.waitForSync();
  });

  test('an object deleted before its first reconcile is not waited for; an empty source syncs at once', async () => {
    const source = fakeSource(['a', 'b']);
    const tracker = newInitialSyncTracker([{ source, mapFn: (object) => ({ ...objectKeyOf(object) }) }]);
    const reconcile = tracker.wrap(async () => undefined);
    source.sync();
    await settle();
    await reconcileAll(reconcile, [{ namespace: 'ns', name: 'a' }]);
    expect(tracker.hasSynced()).toBe(false);
    source.remove('b');
    expect(tracker.hasSynced()).toBe(true);

    const empty = fakeSource([]);
    const emptyTracker = newInitialSyncTracker([{ source: empty }]);
    expect(emptyTracker.hasSynced()).toBe(false);
    empty.sync();
    await emptyTracker.waitForSync();
    expect(emptyTracker.hasSynced()).toBe(true);
  });

  test('waiting is abandoned when the signal aborts', async () => {
    const tracker = newInitialSyncTracker([{ source: fakeSource(['a']) }]);
    await expect(tracker.waitForSync(AbortSignal.abort(new Error('stopping')))).rejects.toThrow('stopping');
  });
});
