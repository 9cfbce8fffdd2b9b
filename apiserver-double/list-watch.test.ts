import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api, makeInformer, Watch } from '@kubernetes/client-node';
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';
import { waitFor } from '../testing/wait-for.js';

interface Seen {
  type: string;
  name: string | undefined;
  rv: string | undefined;
  object: Record<string, unknown>;
}

/** Opens a watch and records its events until `stop()`. */
async function record(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | boolean | number>,
): Promise<{ events: Seen[]; done: () => boolean; doneError: () => unknown; stop: () => void }> {
  const events: Seen[] = [];
  let finished = false;
  let error: unknown;
  const controller = await new Watch(kc).watch(
    path,
    query,
    (type, object: { metadata?: { name?: string; resourceVersion?: string } }) => {
      events.push({ type, name: object.metadata?.name, rv: object.metadata?.resourceVersion, object: object as Record<string, unknown> });
    },
    (err) => {
      finished = true;
      error = err;
    },
  );
  return { events, done: () => finished, doneError: () => error, stop: () => controller.abort() };
}

describe('API server double: list and watch', () => {
  let server: ApiServerDouble;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const make = (namespace: string, name: string, labels: Record<string, string> = {}): Promise<V1ConfigMap> =>
    core.createNamespacedConfigMap({ namespace, body: { metadata: { name, labels } } });

  beforeAll(async () => {
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'sel' } } });
    await make('sel', 'a', { app: 'web', tier: 'front', rank: '3' });
    await make('sel', 'b', { app: 'web', tier: 'back', rank: '7' });
    await make('sel', 'c', { app: 'db' });
    await make('sel', 'd', {});
  });

  afterAll(async () => {
    await server.close();
  });

  test.each([
    ['app=web', ['a', 'b']],
    ['app==web,tier=front', ['a']],
    ['app!=web', ['c', 'd']],
    ['tier in (front, back)', ['a', 'b']],
    ['app notin (web)', ['c', 'd']],
    ['tier', ['a', 'b']],
    ['!tier', ['c', 'd']],
    ['rank>5', ['b']],
    ['', ['a', 'b', 'c', 'd']],
  ])('labelSelector %p', async (labelSelector, expected) => {
    const list = await core.listNamespacedConfigMap({ namespace: 'sel', labelSelector });
    expect(list.items.map((i) => i.metadata?.name)).toEqual(expected);
  });

  test('a malformed label selector is 400 BadRequest', async () => {
    const status = await expectStatus(() => core.listNamespacedConfigMap({ namespace: 'sel', labelSelector: 'app in web' }));
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  test('fieldSelector on metadata.name and metadata.namespace; other fields are refused', async () => {
    const byName = await core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'metadata.name=b' });
    expect(byName.items.map((i) => i.metadata?.name)).toEqual(['b']);
    const notName = await core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'metadata.name!=b' });
    expect(notName.items.map((i) => i.metadata?.name)).toEqual(['a', 'c', 'd']);
    const everywhere = await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=sel' });
    expect(everywhere.items).toHaveLength(4);
    const unsupported = await expectStatus(() => core.listNamespacedConfigMap({ namespace: 'sel', fieldSelector: 'data.x=1' }));
    expect(unsupported).toMatchObject({ code: 400, message: 'field label not supported: data.x' });
  });

  test('lists carry the list kind and resourceVersion; built-in items leave out apiVersion and kind', async () => {
    const response = await fetch(`${server.url}/api/v1/namespaces/sel/configmaps`);
    const list = (await response.json()) as { kind: string; apiVersion: string; metadata: { resourceVersion: string }; items: Record<string, unknown>[] };
    expect(list.kind).toBe('ConfigMapList');
    expect(list.apiVersion).toBe('v1');
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(list.items[0]?.['kind']).toBeUndefined();
  });

  test('limit and continue page through a consistent snapshot', async () => {
    const first = await core.listNamespacedConfigMap({ namespace: 'sel', limit: 2 });
    expect(first.items.map((i) => i.metadata?.name)).toEqual(['a', 'b']);
    expect(first.metadata?.remainingItemCount).toBe(2);
    await make('sel', 'e');
    await core.deleteNamespacedConfigMap({ name: 'd', namespace: 'sel' });
    const second = await core.listNamespacedConfigMap({ namespace: 'sel', limit: 2, _continue: first.metadata?._continue ?? '' });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(['c', 'd']);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    expect(second.metadata?._continue).toBeUndefined();
    const now = await core.listNamespacedConfigMap({ namespace: 'sel' });
    expect(now.items.map((i) => i.metadata?.name)).toEqual(['a', 'b', 'c', 'e']);
    await make('sel', 'd', {});
    await core.deleteNamespacedConfigMap({ name: 'e', namespace: 'sel' });
  });

  test('watch from a resourceVersion replays later events in order, then follows live ones', async () => {
    await core.createNamespace({ body: { metadata: { name: 'w1' } } });
    const start = await core.listNamespacedConfigMap({ namespace: 'w1' });
    await make('w1', 'x');
    const x = await core.readNamespacedConfigMap({ name: 'x', namespace: 'w1' });
    await core.replaceNamespacedConfigMap({ name: 'x', namespace: 'w1', body: { ...x, data: { v: '2' } } });
    const watch = await record(kc, '/api/v1/namespaces/w1/configmaps', { resourceVersion: start.metadata!.resourceVersion! });
    await waitFor(() => watch.events.length === 2, { description: 'replayed events', timeoutMs: 3000 });
    await core.deleteNamespacedConfigMap({ name: 'x', namespace: 'w1' });
    await waitFor(() => watch.events.length === 3, { description: 'live delete', timeoutMs: 3000 });
    expect(watch.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED x', 'MODIFIED x', 'DELETED x']);
    const rvs = watch.events.map((e) => Number(e.rv));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    expect(watch.events[0]?.object['kind']).toBe('ConfigMap');
    watch.stop();
  });

  test('a watch without resourceVersion starts with ADDED for every current object', async () => {
    const watch = await record(kc, '/api/v1/namespaces/sel/configmaps', { labelSelector: 'app=web' });
    await waitFor(() => watch.events.length === 2, { description: 'initial events', timeoutMs: 3000 });
    expect(watch.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'ADDED b']);
    watch.stop();
  });

  test('selector transitions arrive as ADDED and DELETED', async () => {
    await core.createNamespace({ body: { metadata: { name: 'w2' } } });
    const start = await core.listNamespacedConfigMap({ namespace: 'w2' });
    const watch = await record(kc, '/api/v1/namespaces/w2/configmaps', { resourceVersion: start.metadata!.resourceVersion!, labelSelector: 'on=yes' });
    const obj = await make('w2', 'flip', { on: 'no' });
    const on = await core.replaceNamespacedConfigMap({ name: 'flip', namespace: 'w2', body: { ...obj, metadata: { ...obj.metadata, labels: { on: 'yes' } } } });
    await core.replaceNamespacedConfigMap({ name: 'flip', namespace: 'w2', body: { ...on, metadata: { ...on.metadata, labels: { on: 'no' } } } });
    await waitFor(() => watch.events.length === 2, { description: 'transitions', timeoutMs: 3000 });
    expect(watch.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    watch.stop();
  });

  test('sendInitialEvents ends the initial state with an annotated BOOKMARK', async () => {
    const watch = await record(kc, '/api/v1/namespaces/sel/configmaps', {
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      resourceVersionMatch: 'NotOlderThan',
    });
    await waitFor(() => watch.events.some((e) => e.type === 'BOOKMARK'), { description: 'initial-events-end bookmark', timeoutMs: 3000 });
    expect(watch.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    const bookmark = watch.events[4]?.object as { metadata: { annotations: Record<string, string> } };
    expect(bookmark.metadata.annotations['k8s.io/initial-events-end']).toBe('true');
    watch.stop();
  });

  test('an informer sees adds, updates and deletes', async () => {
    await core.createNamespace({ body: { metadata: { name: 'inf' } } });
    const informer = makeInformer(kc, '/api/v1/namespaces/inf/configmaps', () => core.listNamespacedConfigMap({ namespace: 'inf' }));
    const log: string[] = [];
    informer.on('add', (o) => log.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => log.push(`update ${o.metadata?.name} ${JSON.stringify(o.data)}`));
    informer.on('delete', (o) => log.push(`delete ${o.metadata?.name}`));
    await make('inf', 'before');
    await informer.start();
    await waitFor(() => log.length === 1, { description: 'initial add', timeoutMs: 3000 });
    const created = await make('inf', 'after');
    await core.replaceNamespacedConfigMap({ name: 'after', namespace: 'inf', body: { ...created, data: { k: 'v' } } });
    await core.deleteNamespacedConfigMap({ name: 'before', namespace: 'inf' });
    await waitFor(() => log.length === 4, { description: 'informer events', timeoutMs: 3000 });
    expect(log).toEqual(['add before', 'add after', 'update after {"k":"v"}', 'delete before']);
    expect(informer.list('inf').map((o) => o.metadata?.name)).toEqual(['after']);
    await informer.stop();
  });
});

describe('API server double: history limits and bookmarks', () => {
  test('a watch from a compacted resourceVersion gets an ERROR event with 410 Expired, and an informer relists', async () => {
    const server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    try {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => core.listNamespacedConfigMap({ namespace: 'default' }));
      const names = (): string[] =>
        informer
          .list('default')
          .map((o) => o.metadata!.name!)
          .sort();
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'one' } } });
      await informer.start();
      await waitFor(() => names().length === 1, { description: 'informer sync', timeoutMs: 3000 });
      const oldRv = (await core.listNamespacedConfigMap({ namespace: 'default' })).metadata!.resourceVersion!;
      await informer.stop();
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'two' } } });
      server.faults.compactHistory();

      const watch = await record(kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: oldRv });
      await waitFor(() => watch.done(), { description: 'watch end', timeoutMs: 3000 });
      expect(watch.events).toHaveLength(1);
      expect(watch.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });

      const listStatus = await expectStatus(() =>
        core.listNamespacedConfigMap({ namespace: 'default', resourceVersion: oldRv, resourceVersionMatch: 'Exact' }),
      );
      expect(listStatus).toMatchObject({ code: 410, reason: 'Expired' });

      await informer.start();
      await waitFor(() => names().join() === 'one,two', { description: 'relist after 410', timeoutMs: 3000 });
      await informer.stop();
    } finally {
      await server.close();
    }
  });

  test('a small historyLimit expires old resource versions on its own', async () => {
    const server = await startApiServerDouble({ historyLimit: 3, bookmarkIntervalMs: 0 });
    try {
      const core = server.kubeConfig().makeApiClient(CoreV1Api);
      const start = await core.listNamespacedConfigMap({ namespace: 'default' });
      for (const name of ['h1', 'h2', 'h3', 'h4']) await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
      const watch = await record(server.kubeConfig(), '/api/v1/namespaces/default/configmaps', { resourceVersion: start.metadata!.resourceVersion! });
      await waitFor(() => watch.done(), { description: 'watch end', timeoutMs: 3000 });
      expect(watch.events[0]?.type).toBe('ERROR');
      const recent = Number(start.metadata!.resourceVersion!) + 2;
      const ok = await record(server.kubeConfig(), '/api/v1/namespaces/default/configmaps', { resourceVersion: String(recent) });
      await waitFor(() => ok.events.length === 2, { description: 'recent events', timeoutMs: 3000 });
      expect(ok.events.map((e) => e.name)).toEqual(['h3', 'h4']);
      ok.stop();
    } finally {
      await server.close();
    }
  });

  test('allowWatchBookmarks brings periodic BOOKMARKs at the current resourceVersion', async () => {
    const clock = new FakeClock();
    const server = await startApiServerDouble({ clock, bookmarkIntervalMs: 60_000 });
    try {
      const kc = server.kubeConfig();
      const core = kc.makeApiClient(CoreV1Api);
      const start = await core.listNamespacedConfigMap({ namespace: 'default' });
      const watch = await record(kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: start.metadata!.resourceVersion!, allowWatchBookmarks: true });
      const plain = await record(kc, '/api/v1/namespaces/default/configmaps', { resourceVersion: start.metadata!.resourceVersion! });
      await waitFor(() => clock.pendingTimers() === 1, { description: 'bookmark timer', timeoutMs: 3000 });
      const other = await core.createNamespace({ body: { metadata: { name: 'elsewhere' } } });
      clock.advance(60_000);
      await waitFor(() => watch.events.length === 1, { description: 'bookmark', timeoutMs: 3000 });
      expect(watch.events[0]).toMatchObject({ type: 'BOOKMARK', rv: other.metadata?.resourceVersion, object: { kind: 'ConfigMap', apiVersion: 'v1' } });
      clock.advance(60_000);
      await waitFor(() => watch.events.length === 2, { description: 'second bookmark', timeoutMs: 3000 });
      expect(plain.events).toHaveLength(0);
      watch.stop();
      plain.stop();
    } finally {
      await server.close();
    }
  });

  test('timeoutSeconds ends the watch cleanly', async () => {
    const clock = new FakeClock();
    const server = await startApiServerDouble({ clock });
    try {
      const watch = await record(server.kubeConfig(), '/api/v1/namespaces/default/configmaps', { timeoutSeconds: 30 });
      await waitFor(() => clock.pendingTimers() === 1, { description: 'timeout timer', timeoutMs: 3000 });
      expect(watch.done()).toBe(false);
      clock.advance(30_000);
      await waitFor(() => watch.done(), { description: 'watch end', timeoutMs: 3000 });
      expect(watch.doneError()).toBeNull();
    } finally {
      await server.close();
    }
  });
});
