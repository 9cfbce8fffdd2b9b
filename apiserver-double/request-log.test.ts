import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiRequestRecord, type ApiServerDouble } from './index.js';

// The request recorder names each request as RBAC does: verb, API group, resource[/subresource],
// and the requester of the bearer token.
const records: ApiRequestRecord[] = [];
let kube: ApiServerDouble;

beforeAll(async () => {
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0, onRequest: (record) => records.push(record) });
});
afterAll(() => kube.close());

describe('onRequest', () => {
  test('get, list, create, update and delete are recorded with group, resource and user', async () => {
    const admin = kube.kubeConfig();
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'foo' } } });
    await core.createNamespacedServiceAccount({ namespace: 'foo', body: { metadata: { name: 'app' } } });
    records.length = 0;
    const asApp = kube.kubeConfig();
    asApp.loadFromString(kube.kubeconfigYaml(kube.issueToken({ namespace: 'foo', serviceAccount: 'app' })));
    const leases = asApp.makeApiClient(CoordinationV1Api);
    const lease = await leases.createNamespacedLease({ namespace: 'foo', body: { metadata: { name: 'l' }, spec: { holderIdentity: 'a' } } });
    await leases.replaceNamespacedLease({ namespace: 'foo', name: 'l', body: lease });
    await leases.readNamespacedLease({ namespace: 'foo', name: 'l' });
    await core.listNamespacedConfigMap({ namespace: 'foo' });
    await core.deleteNamespacedServiceAccount({ namespace: 'foo', name: 'app' });
    await expect(admin.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: 'nope.io', version: 'v1', plural: 'things' })).rejects.toThrow();
    const app = 'system:serviceaccount:foo:app';
    expect(records).toEqual([
      { verb: 'create', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'foo', username: app },
      { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'foo', name: 'l', username: app },
      { verb: 'get', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'foo', name: 'l', username: app },
      { verb: 'list', apiGroup: '', resource: 'configmaps', namespace: 'foo', username: 'kubernetes-admin' },
      { verb: 'delete', apiGroup: '', resource: 'serviceaccounts', namespace: 'foo', name: 'app', username: 'kubernetes-admin' },
    ]);
  });
});
