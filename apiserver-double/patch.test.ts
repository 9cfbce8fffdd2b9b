import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AppsV1Api, CoreV1Api, KubernetesObjectApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';

describe('API server double: patches and server-side apply', () => {
  let server: ApiServerDouble;
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;

  beforeAll(async () => {
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const kc = server.kubeConfig();
    core = kc.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
  });

  afterAll(async () => {
    await server.close();
  });

  const patchConfigMap = (name: string, body: unknown, strategy: PatchStrategy): Promise<V1ConfigMap> =>
    core.patchNamespacedConfigMap({ name, namespace: 'default', body }, setHeaderOptions('Content-Type', strategy));

  test('JSON merge patch merges maps and deletes with null', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'm', labels: { a: '1' } }, data: { x: '1', y: '2' } } });
    const patched = await patchConfigMap('m', { metadata: { labels: { b: '2' } }, data: { x: null, z: '3' } }, PatchStrategy.MergePatch);
    expect(patched.metadata?.labels).toEqual({ a: '1', b: '2' });
    expect(patched.data).toEqual({ y: '2', z: '3' });
  });

  test('a merge patch carrying a stale resourceVersion is a conflict', async () => {
    const current = await core.readNamespacedConfigMap({ name: 'm', namespace: 'default' });
    await patchConfigMap('m', { data: { w: '0' } }, PatchStrategy.MergePatch);
    const status = await expectStatus(() =>
      patchConfigMap('m', { metadata: { resourceVersion: current.metadata?.resourceVersion }, data: { w: '1' } }, PatchStrategy.MergePatch),
    );
    expect(status).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  test('JSON patch: add, replace, remove, test; a failed test is 422 and changes nothing', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'j' }, data: { a: '1' } } });
    const patched = await patchConfigMap(
      'j',
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b~1c', value: '2' },
        { op: 'replace', path: '/data/a', value: '10' },
        { op: 'add', path: '/metadata/labels', value: { l: 'v' } },
      ],
      PatchStrategy.JsonPatch,
    );
    expect(patched.data).toEqual({ a: '10', 'b/c': '2' });
    expect(patched.metadata?.labels).toEqual({ l: 'v' });
    const failed = await expectStatus(() =>
      patchConfigMap(
        'j',
        [
          { op: 'test', path: '/data/a', value: 'nope' },
          { op: 'remove', path: '/data/a' },
        ],
        PatchStrategy.JsonPatch,
      ),
    );
    expect(failed.code).toBe(422);
    const removedMissing = await expectStatus(() => patchConfigMap('j', [{ op: 'remove', path: '/data/zzz' }], PatchStrategy.JsonPatch));
    expect(removedMissing.code).toBe(422);
    expect((await core.readNamespacedConfigMap({ name: 'j', namespace: 'default' })).data).toEqual({ a: '10', 'b/c': '2' });
  });

  test('strategic merge patch merges containers by name and honours $patch: delete', async () => {
    const apps = server.kubeConfig().makeApiClient(AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'smp' },
        spec: {
          selector: { matchLabels: { app: 'smp' } },
          template: {
            metadata: { labels: { app: 'smp' } },
            spec: {
              containers: [
                { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] },
                { name: 'proxy', image: 'proxy:1' },
              ],
            },
          },
        },
      },
    });
    const patched: V1Deployment = await apps.patchNamespacedDeployment(
      {
        name: 'smp',
        namespace: 'default',
        body: {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'app', image: 'app:2', env: [{ name: 'B', value: '2' }] },
                  { name: 'proxy', $patch: 'delete' },
                ],
              },
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(patched.spec?.template.spec?.containers).toEqual([
      {
        name: 'app',
        image: 'app:2',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
      },
    ]);
    expect(patched.metadata?.generation).toBe(2);
  });

  test('server-side apply creates, records the manager, and removes fields it stops applying', async () => {
    const apply = (body: KubernetesObject & { data?: Record<string, string> }, manager: string, force = false): Promise<KubernetesObject> =>
      objects.patch(body, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);
    const created = (await apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default', labels: { owner: 'a' } }, data: { a: '1', b: '2' } },
      'mgr-a',
    )) as V1ConfigMap;
    expect(created.data).toEqual({ a: '1', b: '2' });
    expect(created.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([['mgr-a', 'Apply']]);
    expect(created.metadata?.managedFields?.[0]?.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:owner': {} } } });

    const shrunk = (await apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default' }, data: { a: '1' } },
      'mgr-a',
    )) as V1ConfigMap;
    expect(shrunk.data).toEqual({ a: '1' });
    expect(shrunk.metadata?.labels).toBeUndefined();

    const shared = (await apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default' }, data: { a: '1', c: '3' } },
      'mgr-b',
    )) as V1ConfigMap;
    expect(shared.data).toEqual({ a: '1', c: '3' });
    expect(shared.metadata?.managedFields?.map((m) => m.manager).sort()).toEqual(['mgr-a', 'mgr-b']);
  });

  test('server-side apply conflicts on a field another manager owns with a different value, unless forced', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa', namespace: 'default' }, data: { a: 'changed' } };
    const conflict = await expectStatus(() => objects.patch(body, undefined, undefined, 'mgr-b', false, PatchStrategy.ServerSideApply));
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "mgr-a" using v1: .data.a');
    expect(conflict.details?.['causes']).toEqual([{ type: 'FieldManagerConflict', message: 'conflict with "mgr-a" using v1', field: '.data.a' }]);

    const forced = (await objects.patch(body, undefined, undefined, 'mgr-b', true, PatchStrategy.ServerSideApply)) as V1ConfigMap;
    expect(forced.data).toEqual({ a: 'changed' });
    const byManager = Object.fromEntries((forced.metadata?.managedFields ?? []).map((m) => [m.manager, m.fieldsV1]));
    expect(byManager['mgr-b']).toEqual({ 'f:data': { 'f:a': {} } });
    expect(byManager['mgr-a']).toBeUndefined();
  });

  test('server-side apply needs a fieldManager', async () => {
    const status = await expectStatus(() =>
      objects.patch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nofm', namespace: 'default' } },
        undefined,
        undefined,
        undefined,
        false,
        PatchStrategy.ServerSideApply,
      ),
    );
    expect(status.code).toBe(422);
  });

  test('an update by another client takes ownership without conflict, and apply then conflicts with it', async () => {
    const apply = (data: Record<string, string>, force = false): Promise<KubernetesObject> =>
      objects.patch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mixed', namespace: 'default' }, data } as KubernetesObject,
        undefined,
        undefined,
        'applier',
        force,
        PatchStrategy.ServerSideApply,
      );
    await apply({ k: '1' });
    const current = await core.readNamespacedConfigMap({ name: 'mixed', namespace: 'default' });
    await core.replaceNamespacedConfigMap({ name: 'mixed', namespace: 'default', body: { ...current, data: { k: '2' } }, fieldManager: 'editor' });
    const conflict = await expectStatus(() => apply({ k: '3' }));
    expect(conflict.message).toContain('conflict with "editor"');
    const same = (await apply({ k: '2' })) as V1ConfigMap;
    expect(same.data).toEqual({ k: '2' });
  });
});
