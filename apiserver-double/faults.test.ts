import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AuthorizationV1Api, CoreV1Api, VersionApi, Watch } from '@kubernetes/client-node';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';
import { waitFor } from '../testing/wait-for.js';

describe('API server double: fault controls', () => {
  const clock = new FakeClock();
  let server: ApiServerDouble;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startApiServerDouble({ clock, bookmarkIntervalMs: 0 });
    core = server.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterAll(async () => {
    await server.close();
  });

  test('failNext answers the next N requests with that status, then recovers', async () => {
    server.faults.failNext(2, 503);
    expect(server.faults.pendingFailures()).toBe(2);
    const first = await expectStatus(() => core.listNamespace());
    expect(first).toMatchObject({ httpCode: 503, code: 503, reason: 'ServiceUnavailable', kind: 'Status' });
    expect((await expectStatus(() => core.readNamespace({ name: 'default' }))).code).toBe(503);
    expect(server.faults.pendingFailures()).toBe(0);
    expect((await core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
  });

  test('delayMs holds every response until the delay has passed', async () => {
    server.faults.delayMs(5000);
    let answered = false;
    const pending = core.readNamespace({ name: 'default' }).then((ns) => {
      answered = true;
      return ns;
    });
    await waitFor(() => clock.pendingTimers() === 1, { description: 'delay timer', timeoutMs: 3000 });
    clock.advance(4999);
    expect(answered).toBe(false);
    server.faults.delayMs(0);
    clock.advance(1);
    expect((await pending).metadata?.name).toBe('default');
  });

  test('dropWatches ends open watch streams abruptly', async () => {
    const events: string[] = [];
    let ended = false;
    await new Watch(server.kubeConfig()).watch(
      '/api/v1/namespaces',
      {},
      (type) => events.push(type),
      () => {
        ended = true;
      },
    );
    await waitFor(() => events.length >= 4, { description: 'initial events', timeoutMs: 3000 });
    server.faults.dropWatches();
    await waitFor(() => ended, { description: 'watch end', timeoutMs: 3000 });
    await core.createNamespace({ body: { metadata: { name: 'after-drop' } } });
    expect(events.every((e) => e === 'ADDED')).toBe(true);
    expect(events).toHaveLength(4);
  });

  test('compactHistory makes older resource versions expire', async () => {
    const before = await core.listNamespace();
    await core.createNamespace({ body: { metadata: { name: 'after-compact' } } });
    server.faults.compactHistory();
    let error: { type: string; code?: number } | undefined;
    let ended = false;
    await new Watch(server.kubeConfig()).watch(
      '/api/v1/namespaces',
      { resourceVersion: before.metadata?.resourceVersion },
      (type, object: { code?: number }) => {
        error = { type, ...(object.code !== undefined ? { code: object.code } : {}) };
      },
      () => {
        ended = true;
      },
    );
    await waitFor(() => ended, { description: 'watch end', timeoutMs: 3000 });
    expect(error).toEqual({ type: 'ERROR', code: 410 });
  });

  test('denyAccess: access reviews answer denied for the matching requests, which get 403, until cleared', async () => {
    const authorization = server.kubeConfig().makeApiClient(AuthorizationV1Api);
    const canCreate = async (resource: string, group = '', namespace?: string) =>
      (
        await authorization.createSelfSubjectAccessReview({
          body: { spec: { resourceAttributes: { verb: 'create', group, resource, ...(namespace ? { namespace } : {}) } } },
        })
      ).status;
    expect(await canCreate('namespaces')).toMatchObject({ allowed: true });
    server.faults.denyAccess([
      { verb: 'create', resource: 'namespaces' },
      { group: 'apps', resource: 'deployments', namespace: 'mesh-system' },
    ]);
    expect(await canCreate('namespaces')).toEqual({ allowed: false });
    expect(await canCreate('configmaps', '', 'mesh-system')).toMatchObject({ allowed: true });
    expect(await canCreate('deployments', 'apps', 'mesh-system')).toEqual({ allowed: false });
    expect(await canCreate('deployments', 'apps', 'other')).toMatchObject({ allowed: true });
    const refused = await expectStatus(() => core.createNamespace({ body: { metadata: { name: 'denied' } } }));
    expect(refused).toMatchObject({ httpCode: 403, reason: 'Forbidden' });
    expect(refused.message).toBe('namespaces is forbidden: User "kubernetes-admin" cannot create resource "namespaces" in API group "" at the cluster scope');
    expect((await core.readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    server.faults.denyAccess([]);
    expect(await canCreate('namespaces')).toMatchObject({ allowed: true });
    expect((await core.createNamespace({ body: { metadata: { name: 'denied' } } })).metadata?.name).toBe('denied');
  });

  test('GET /version answers the kubernetesVersion option', async () => {
    const old = await startApiServerDouble({ kubernetesVersion: '1.16.3', bookmarkIntervalMs: 0 });
    try {
      expect(await old.kubeConfig().makeApiClient(VersionApi).getCode()).toMatchObject({ major: '1', minor: '16', gitVersion: 'v1.16.3-mesh-double' });
    } finally {
      await old.close();
    }
    expect((await server.kubeConfig().makeApiClient(VersionApi).getCode()).gitVersion).toBe('v1.35.0-mesh-double');
  });

  test('refuseConnections closes connections at once until turned off', async () => {
    server.faults.refuseConnections(true);
    await expect(fetch(`${server.url}/api/v1/namespaces`)).rejects.toThrow();
    await expect(core.listNamespace()).rejects.toThrow();
    server.faults.refuseConnections(false);
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
  });
});
