import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, test } from '@jest/globals';
import { startApiServerDouble } from '../apiserver-double/index.js';
import type { ApiServerDouble } from '../apiserver-double/index.js';
import { newRealClock } from './clock.js';
import { FakeClock } from './testing/fake-clock.js';
import type { Clock } from './clock.js';
import { newInformerSource } from './informer-source.js';
import type { InformerSourceOptions } from './informer-source.js';
import type { KubeObject, Source, SourceEvent } from './source.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';

const CONFIGMAPS = '/api/v1/configmaps';
const RESTART_MESSAGES = ['list/watch failed, restarting', 'resource version expired, relisting', 'watch closed, reconnecting'];

/** Writes ConfigMaps in `default` over plain HTTP, one connection per call. */
function newConfigMapWriter(double: ApiServerDouble): {
  create(name: string, labels?: Record<string, string>): Promise<KubeObject>;
  update(name: string, data: Record<string, string>, labels?: Record<string, string>): Promise<KubeObject>;
  remove(name: string): Promise<void>;
} {
  const token = double.kubeConfig().getCurrentUser()?.token ?? '';
  const call = (method: string, path: string, contentType: string, body?: unknown): Promise<KubeObject> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        `${double.url}${path}`,
        { method, agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': contentType } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
            else resolve(JSON.parse(text) as KubeObject);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const base = '/api/v1/namespaces/default/configmaps';
  return {
    create: (name, labels) =>
      call('POST', base, 'application/json', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, ...(labels ? { labels } : {}) },
        data: { version: '1' },
      }),
    update: (name, data, labels) => call('PATCH', `${base}/${name}`, 'application/merge-patch+json', { data, ...(labels ? { metadata: { labels } } : {}) }),
    remove: async (name) => {
      await call('DELETE', `${base}/${name}`, 'application/json');
    },
  };
}

const nameOf = (object: KubeObject): string => object.metadata?.name ?? '';
const rvOf = (object: KubeObject): string => object.metadata?.resourceVersion ?? '';
const describeEvent = (event: SourceEvent<KubeObject>): string =>
  event.type === 'apply' ? `apply ${nameOf(event.object)}@${rvOf(event.object)}` : `delete ${nameOf(event.object)}`;
const applied = (object: KubeObject): string => `apply ${nameOf(object)}@${rvOf(object)}`;
const storeState = (source: Source): string[] =>
  source.store
    .list()
    .map((o) => `${nameOf(o)}@${rvOf(o)}`)
    .sort();
const serverState = (double: ApiServerDouble): string[] =>
  double
    .objects('v1', 'ConfigMap', 'default')
    .map((o) => `${nameOf(o)}@${rvOf(o)}`)
    .sort();

interface Harness {
  double: ApiServerDouble;
  writer: ReturnType<typeof newConfigMapWriter>;
  source: Source;
  events: string[];
  logs: LogEntry[];
  clock: Clock;
  start(): void;
  /** The restarts logged so far. */
  restarts(): LogEntry[];
  /** Resolves once the source has opened `count` watches in all. */
  watching(count: number): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(options: { clock?: Clock } & Partial<Omit<InformerSourceOptions<KubeObject>, 'log' | 'clock'>> = {}): Promise<Harness> {
  const double = await startApiServerDouble();
  cleanups.push(() => double.close());
  const logs: LogEntry[] = [];
  const events: string[] = [];
  const clock = options.clock ?? newRealClock();
  const source = newInformerSource<KubeObject>({
    name: 'configmaps',
    kubeConfig: double.kubeConfig(),
    path: CONFIGMAPS,
    log: newRecordingLogger(logs),
    backoff: { initialMs: 1000, maxMs: 8000, factor: 2, jitter: 0, resetAfterMs: 60_000 },
    fieldSelector: 'metadata.namespace=default',
    ...options,
    clock,
  });
  source.subscribe((event) => events.push(describeEvent(event)));
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  cleanups.push(async () => {
    controller.abort();
    await running;
  });
  return {
    double,
    writer: newConfigMapWriter(double),
    source,
    events,
    logs,
    clock,
    start: () => {
      running = source.start(controller.signal);
    },
    restarts: () => logs.filter((entry) => RESTART_MESSAGES.includes(entry.message)),
    watching: async (count) => {
      await waitFor(() => logs.filter((entry) => entry.message === 'watching').length >= count, { description: `watch ${count}` });
    },
  };
}

describe('newInformerSource against the API server double', () => {
  test('initial sync stores the full list, then late subscribers get the store replayed', async () => {
    const h = await harness();
    const a = await h.writer.create('a');
    const b = await h.writer.create('b');
    expect(h.source.isSynced()).toBe(false);
    h.start();
    await h.source.waitForSync();
    expect(h.source.isSynced()).toBe(true);
    expect(storeState(h.source)).toEqual([`a@${rvOf(a)}`, `b@${rvOf(b)}`]);
    expect(h.events).toEqual([applied(a), applied(b)]);
    // List items carry no type meta on the wire; the source fills it in.
    expect(h.source.store.get({ namespace: 'default', name: 'a' })).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(h.source.store.get({ namespace: 'default', name: 'missing' })).toBeUndefined();

    const late: string[] = [];
    h.source.subscribe((event) => late.push(describeEvent(event)));
    expect(late.sort()).toEqual([applied(a), applied(b)]);
    await expect(h.source.waitForReady?.(new AbortController().signal)).resolves.toBeUndefined();
  });

  test('watch events arrive in order; unsubscribe stops delivery; a throwing subscriber harms no one', async () => {
    const h = await harness();
    h.start();
    await h.source.waitForSync();
    const second: string[] = [];
    const unsubscribe = h.source.subscribe((event) => second.push(describeEvent(event)));
    h.source.subscribe(() => {
      throw new Error('subscriber bug');
    });

    const a1 = await h.writer.create('a');
    const a2 = await h.writer.update('a', { version: '2' });
    await h.writer.remove('a');
    const b = await h.writer.create('b');
    await waitFor(() => h.events.length >= 4, { description: 'the last event' });
    expect(h.events).toEqual([applied(a1), applied(a2), 'delete a', applied(b)]);
    expect(second).toEqual(h.events);
    expect(storeState(h.source)).toEqual([`b@${rvOf(b)}`]);
    expect(h.logs.filter((l) => l.message === 'subscriber failed')).toHaveLength(4);

    unsubscribe();
    unsubscribe();
    const c = await h.writer.create('c');
    await waitFor(() => h.events.length >= 5, { description: 'c' });
    expect(h.events[4]).toBe(applied(c));
    expect(second).toHaveLength(4);
  });

  test('a label selector scopes the store; leaving the selection is a delete', async () => {
    const h = await harness({ labelSelector: 'app=web' });
    const web = await h.writer.create('web', { app: 'web' });
    await h.writer.create('db', { app: 'db' });
    h.start();
    await h.source.waitForSync();
    expect(storeState(h.source)).toEqual([`web@${rvOf(web)}`]);
    await h.writer.update('web', { version: '2' }, { app: 'other' });
    await waitFor(() => h.events.includes('delete web'), { description: 'the delete' });
    expect(h.source.store.list()).toEqual([]);
  });

  test('after a dropped watch, changes made while disconnected are replayed exactly once each', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    await h.writer.create('keep');
    const change = await h.writer.create('change');
    await h.writer.create('gone');
    h.start();
    await h.source.waitForSync();
    h.events.length = 0;
    await h.watching(1);

    h.double.faults.dropWatches();
    await waitFor(() => h.restarts().length === 1, { description: 'the restart' });
    expect(h.restarts()[0]).toMatchObject({ level: 'warn', fields: { source: 'configmaps', delayMs: 1000, failures: 1 } });
    const created = await h.writer.create('created');
    const changed = await h.writer.update('change', { version: '2' });
    await h.writer.remove('gone');
    expect(rvOf(changed)).not.toBe(rvOf(change));

    clock.advance(1000);
    await waitFor(() => storeState(h.source).join() === serverState(h.double).join(), { description: 'the store to catch up' });
    expect(h.events).toEqual([applied(created), applied(changed), 'delete gone']);
    expect(h.source.isSynced()).toBe(true);
  });

  test('410 Gone after compaction relists and swaps the store at once', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    await h.writer.create('keep');
    await h.writer.create('change');
    await h.writer.create('gone');
    h.start();
    await h.source.waitForSync();
    h.events.length = 0;
    const seenByFirstEvent: string[][] = [];
    let armed = false;
    h.source.subscribe(() => {
      if (armed && seenByFirstEvent.length === 0) seenByFirstEvent.push(storeState(h.source));
    });
    armed = true;
    await h.watching(1);

    h.double.faults.dropWatches();
    await waitFor(() => h.restarts().length === 1, { description: 'the restart' });
    const created = await h.writer.create('created');
    const changed = await h.writer.update('change', { version: '2' });
    await h.writer.remove('gone');
    h.double.faults.compactHistory();

    clock.advance(1000);
    await waitFor(() => h.restarts().length === 2, { description: 'the 410' });
    expect(h.restarts()[1]).toMatchObject({ level: 'info', message: 'resource version expired, relisting' });
    expect(h.events).toEqual([]);
    clock.advance(2000);
    await waitFor(() => h.events.length >= 3, { description: 'the relist' });
    expect(storeState(h.source)).toEqual(serverState(h.double));
    expect(h.events).toEqual([applied(changed), applied(created), 'delete gone']);
    // The subscriber saw the whole new snapshot already with the first relist event.
    expect(seenByFirstEvent).toEqual([serverState(h.double)]);

    // The watch resumes from the relisted version: later writes still flow.
    const late = await h.writer.create('late');
    await waitFor(() => h.events.includes(applied(late)), { description: 'late' });
    expect(h.events).toHaveLength(4);
  });

  test('refused connections: retries with growing backoff, then catches up with nothing lost or duplicated', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    const keep = await h.writer.create('keep');
    await h.writer.create('change');
    await h.writer.create('gone');
    h.start();
    await h.source.waitForSync();
    h.events.length = 0;
    await h.watching(1);

    h.double.faults.refuseConnections(true);
    await waitFor(() => h.restarts().length === 1, { description: 'restart 1' });
    clock.advance(1000);
    await waitFor(() => h.restarts().length === 2, { description: 'restart 2' });
    clock.advance(2000);
    await waitFor(() => h.restarts().length === 3, { description: 'restart 3' });
    expect(h.restarts().map((entry) => [entry.level, entry.fields['delayMs'], entry.fields['failures']])).toEqual([
      ['warn', 1000, 1],
      ['warn', 2000, 2],
      ['warn', 4000, 3],
    ]);

    h.double.faults.refuseConnections(false);
    const created = await h.writer.create('created');
    const changed = await h.writer.update('change', { version: '2' });
    await h.writer.remove('gone');
    clock.advance(4000);
    await waitFor(() => storeState(h.source).join() === serverState(h.double).join(), { description: 'the store to catch up' });
    expect(h.events).toEqual([applied(created), applied(changed), 'delete gone']);
    expect(h.source.store.get({ namespace: 'default', name: 'keep' })?.metadata?.resourceVersion).toBe(rvOf(keep));

    // A healthy while resets the backoff: the next failure waits the initial delay again.
    await h.watching(2);
    clock.advance(60_000);
    h.double.faults.dropWatches();
    await waitFor(() => h.restarts().length === 4, { description: 'restart 4' });
    expect(h.restarts()[3]?.fields).toMatchObject({ delayMs: 1000, failures: 1 });
  });

  test('server errors on the first list are retried until the source syncs', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    const a = await h.writer.create('a');
    h.double.faults.failNext(2, 503);
    h.start();
    await waitFor(() => h.restarts().length === 1, { description: 'restart 1' });
    expect(String(h.restarts()[0]?.fields['error'])).toContain('503');
    clock.advance(1000);
    await waitFor(() => h.restarts().length === 2, { description: 'restart 2' });
    expect(h.source.isSynced()).toBe(false);
    clock.advance(2000);
    await h.source.waitForSync();
    expect(h.events).toEqual([applied(a)]);
  });

  test('waitForSync rejects when its signal aborts, and when the source stops, before sync', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock });
    h.double.faults.refuseConnections(true);
    h.start();
    await waitFor(() => h.restarts().length === 1, { description: 'a failed list' });

    const waiter = new AbortController();
    const waiting = h.source.waitForSync(waiter.signal);
    const unbounded = h.source.waitForSync();
    waiter.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    await expect(h.source.waitForSync(waiter.signal)).rejects.toThrow('gave up');

    await cleanups.pop()?.(); // stops the source while it sleeps in backoff
    await expect(unbounded).rejects.toMatchObject({ code: 'stopped-before-sync' });
    expect(h.logs.at(-1)?.message).toBe('stopped');
  });

  test('start resolves once the signal aborts, mid-watch, and cannot run twice', async () => {
    const h = await harness();
    h.start();
    await h.source.waitForSync();
    await expect(h.source.start(new AbortController().signal)).rejects.toMatchObject({ code: 'already-started' });
    await cleanups.pop()?.();
    expect(h.logs.at(-1)?.message).toBe('stopped');
    expect(h.source.isSynced()).toBe(true);
  });

  test('resync re-emits every stored object as apply', async () => {
    const clock = new FakeClock();
    const h = await harness({ clock, resyncMs: 30_000 });
    const a = await h.writer.create('a');
    const b = await h.writer.create('b');
    h.start();
    await h.source.waitForSync();
    h.events.length = 0;
    clock.advance(30_000);
    expect(h.events.sort()).toEqual([applied(a), applied(b)]);
    clock.advance(30_000);
    expect(h.events).toHaveLength(4);
  });

  test('listFn replaces the built-in list', async () => {
    const h = await harness({
      listFn: async () => ({
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '1' },
        items: [{ metadata: { name: 'from-list-fn', namespace: 'default', resourceVersion: '1' } }],
      }),
    });
    h.start();
    await h.source.waitForSync();
    expect(h.source.store.list()).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-list-fn', namespace: 'default', resourceVersion: '1' } },
    ]);
  });
});
