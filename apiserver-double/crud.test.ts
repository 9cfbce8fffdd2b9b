import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AdmissionregistrationV1Api, AppsV1Api, CertificatesV1Api, CoordinationV1Api, CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';

describe('API server double: create, read, update, delete', () => {
  let server: ApiServerDouble;
  let core: CoreV1Api;

  beforeAll(async () => {
    server = await startApiServerDouble();
    core = server.kubeConfig().makeApiClient(CoreV1Api);
  });

  afterAll(async () => {
    await server.close();
  });

  test('starts with the default namespaces', async () => {
    const list = await core.listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public']));
    expect(list.items.find((n) => n.metadata?.name === 'default')?.status?.phase).toBe('Active');
  });

  test('create fills uid, creationTimestamp, resourceVersion and generation; get returns the same', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'crud-a', labels: { app: 'a' } }, data: { k: 'v' } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(Number(created.metadata?.resourceVersion)).toBeGreaterThan(0);
    expect(created.metadata?.generation).toBe(1);
    const read = await core.readNamespacedConfigMap({ name: 'crud-a', namespace: 'default' });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    expect(read.data).toEqual({ k: 'v' });
    expect(server.objects('v1', 'ConfigMap', 'default').map((o) => o.metadata?.name)).toContain('crud-a');
  });

  test('generateName gets a random suffix', async () => {
    const a = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    const b = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'gen-' } } });
    expect(a.metadata?.name).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(a.metadata?.name).not.toBe(b.metadata?.name);
  });

  test('a second create is 409 AlreadyExists; a missing namespace is 404; a missing name is 422', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } });
    const dup = await expectStatus(() => core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'dup' } } }));
    expect(dup).toMatchObject({ httpCode: 409, kind: 'Status', reason: 'AlreadyExists', code: 409, message: 'configmaps "dup" already exists' });
    const noNs = await expectStatus(() => core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
    expect(noNs).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "nowhere" not found' });
    const noName = await expectStatus(() => core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: {} } }));
    expect(noName).toMatchObject({ code: 422, reason: 'Invalid' });
    const missing = await expectStatus(() => core.readNamespacedConfigMap({ name: 'absent', namespace: 'default' }));
    expect(missing).toMatchObject({ code: 404, reason: 'NotFound', status: 'Failure', details: { name: 'absent', kind: 'configmaps' } });
  });

  test('update with a stale resourceVersion is 409 Conflict; a current one succeeds', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'upd' }, data: { n: '1' } } });
    const first: V1ConfigMap = { ...created, data: { n: '2' } };
    const updated = await core.replaceNamespacedConfigMap({ name: 'upd', namespace: 'default', body: first });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    expect(updated.metadata?.generation).toBe(2);
    const stale = await expectStatus(() => core.replaceNamespacedConfigMap({ name: 'upd', namespace: 'default', body: { ...created, data: { n: '3' } } }));
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(stale.message).toContain('the object has been modified');
    const unchanged = await core.replaceNamespacedConfigMap({ name: 'upd', namespace: 'default', body: updated });
    expect(unchanged.metadata?.resourceVersion).toBe(updated.metadata?.resourceVersion);
  });

  test('the status subresource: main updates ignore status, status updates ignore the rest', async () => {
    const apps = server.kubeConfig().makeApiClient(AppsV1Api);
    const body = {
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
      },
      status: { replicas: 9 },
    };
    const created = await apps.createNamespacedDeployment({ namespace: 'default', body });
    expect(created.status).toBeUndefined();
    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      name: 'web',
      namespace: 'default',
      body: { ...created, spec: { ...created.spec!, replicas: 5 }, status: { replicas: 2, observedGeneration: 1 } },
    });
    expect(withStatus.status?.replicas).toBe(2);
    expect(withStatus.spec?.replicas).toBeUndefined();
    expect(withStatus.metadata?.generation).toBe(1);
    const withSpec = await apps.replaceNamespacedDeployment({
      name: 'web',
      namespace: 'default',
      body: { ...withStatus, spec: { ...withStatus.spec!, replicas: 3 }, status: { replicas: 7 } },
    });
    expect(withSpec.spec?.replicas).toBe(3);
    expect(withSpec.status?.replicas).toBe(2);
    expect(withSpec.metadata?.generation).toBe(2);
  });

  test('Lease create, renew and conflict through CoordinationV1Api', async () => {
    const coordination = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await coordination.createNamespacedLease({
      namespace: 'kube-system',
      body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: new Date(), renewTime: new Date() } },
    });
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(String(lease.spec?.renewTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const renewed = await coordination.replaceNamespacedLease({
      name: 'leader',
      namespace: 'kube-system',
      body: { ...lease, spec: { ...lease.spec, renewTime: new Date(Date.now() + 1000) } },
    });
    const takeover = await expectStatus(() =>
      coordination.replaceNamespacedLease({ name: 'leader', namespace: 'kube-system', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } } }),
    );
    expect(takeover.code).toBe(409);
    expect((await coordination.readNamespacedLease({ name: 'leader', namespace: 'kube-system' })).spec?.holderIdentity).toBe('a');
    expect(renewed.metadata?.resourceVersion).not.toBe(lease.metadata?.resourceVersion);
  });

  test('delete answers with a Status for config maps and the object for pods', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'gone' } } });
    const status = await core.deleteNamespacedConfigMap({ name: 'gone', namespace: 'default' });
    expect(status).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'gone', kind: 'configmaps', uid: cm.metadata?.uid } });
    expect((await expectStatus(() => core.deleteNamespacedConfigMap({ name: 'gone', namespace: 'default' }))).code).toBe(404);
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    const pod = await core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
    expect(pod.metadata?.name).toBe('p');
    expect(server.objects('v1', 'Pod', 'default')).toHaveLength(0);
  });

  test('finalizers hold a deleted object until they are removed', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'held', finalizers: ['mesh.io/cleanup'] } } });
    await core.deleteNamespacedConfigMap({ name: 'held', namespace: 'default' });
    const held = await core.readNamespacedConfigMap({ name: 'held', namespace: 'default' });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core.replaceNamespacedConfigMap({ name: 'held', namespace: 'default', body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
    expect((await expectStatus(() => core.readNamespacedConfigMap({ name: 'held', namespace: 'default' }))).code).toBe(404);
  });

  test('deleting a namespace deletes everything in it', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'a' } } });
    await core.createNamespacedSecret({ namespace: 'doomed', body: { metadata: { name: 's' }, stringData: { password: 'x' } } });
    const secret = await core.readNamespacedSecret({ name: 's', namespace: 'doomed' });
    expect(secret.data).toEqual({ password: Buffer.from('x').toString('base64') });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'survivor' } } });
    await core.deleteNamespace({ name: 'doomed' });
    expect(server.objects('v1', 'ConfigMap', 'doomed')).toHaveLength(0);
    expect(server.objects('v1', 'Secret', 'doomed')).toHaveLength(0);
    expect(server.objects('v1', 'Namespace').map((n) => n.metadata?.name)).not.toContain('doomed');
    expect(server.objects('v1', 'ConfigMap', 'default').map((n) => n.metadata?.name)).toContain('survivor');
  });

  test('services get a cluster IP and defaulted ports', async () => {
    const svc = await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'reviews' }, spec: { ports: [{ port: 9080, name: 'http' }] } },
    });
    expect(svc.spec?.clusterIP).toMatch(/^10\.96\.\d+\.\d+$/);
    expect(svc.spec?.ports?.[0]).toMatchObject({ protocol: 'TCP', port: 9080 });
  });

  test('writes are recorded in managedFields under the field manager', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'owned' }, data: { a: '1' } }, fieldManager: 'mesh-test' });
    const read = server.objects('v1', 'ConfigMap', 'default').find((o) => o.metadata?.name === 'owned');
    expect(read?.metadata?.['managedFields']).toEqual([
      expect.objectContaining({ manager: 'mesh-test', operation: 'Update', apiVersion: 'v1', fieldsV1: { 'f:data': { 'f:a': {} } } }),
    ]);
  });

  test('every built-in kind is served at its group and version', async () => {
    const expected: [string, string, boolean][] = [
      ['/api/v1', 'namespaces', false],
      ['/api/v1', 'configmaps', true],
      ['/api/v1', 'secrets', true],
      ['/api/v1', 'services', true],
      ['/api/v1', 'pods', true],
      ['/api/v1', 'endpoints', true],
      ['/api/v1', 'serviceaccounts', true],
      ['/apis/discovery.k8s.io/v1', 'endpointslices', true],
      ['/apis/coordination.k8s.io/v1', 'leases', true],
      ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions', false],
      ['/apis/authentication.k8s.io/v1', 'tokenreviews', false],
      ['/apis/certificates.k8s.io/v1', 'certificatesigningrequests', false],
      ['/apis/admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', false],
      ['/apis/admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', false],
      ['/apis/apps/v1', 'deployments', true],
    ];
    for (const [path, plural, namespaced] of expected) {
      const list = (await (await fetch(`${server.url}${path}`)).json()) as { resources: { name: string; namespaced: boolean }[] };
      expect(list.resources.find((r) => r.name === plural)).toMatchObject({ name: plural, namespaced });
    }
    const csrSubresources = (await (await fetch(`${server.url}/apis/certificates.k8s.io/v1`)).json()) as { resources: { name: string }[] };
    expect(csrSubresources.resources.map((r) => r.name)).toEqual([
      'certificatesigningrequests',
      'certificatesigningrequests/status',
      'certificatesigningrequests/approval',
    ]);
    const review = await fetch(`${server.url}/apis/authentication.k8s.io/v1/tokenreviews`);
    expect(review.status).toBe(405);
  });

  test('CertificateSigningRequest: requestor from the bearer token, approval and status subresources', async () => {
    const token = server.issueToken({ namespace: 'mesh-system', serviceAccount: 'meshd' });
    const response = await fetch(`${server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ metadata: { name: 'csr-1' }, spec: { request: 'UEVN', signerName: 'mesh.io/signer', usages: ['digital signature'] } }),
    });
    expect(response.status).toBe(201);
    const certificates = server.kubeConfig().makeApiClient(CertificatesV1Api);
    const csr = await certificates.readCertificateSigningRequest({ name: 'csr-1' });
    expect(csr.spec.username).toBe('system:serviceaccount:mesh-system:meshd');
    expect(csr.spec.groups).toContain('system:serviceaccounts');
    const approved = await certificates.replaceCertificateSigningRequestApproval({
      name: 'csr-1',
      body: {
        ...csr,
        spec: { ...csr.spec, username: 'forged' },
        status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] },
      },
    });
    expect(approved.status?.conditions?.[0]?.type).toBe('Approved');
    expect(approved.spec.username).toBe('system:serviceaccount:mesh-system:meshd');
    const issued = await certificates.replaceCertificateSigningRequestStatus({
      name: 'csr-1',
      body: { ...approved, status: { ...approved.status, certificate: 'Q0VSVA==' } },
    });
    expect(issued.status?.certificate).toBe('Q0VSVA==');
    expect(issued.status?.conditions?.[0]?.type).toBe('Approved');
  });

  test('webhook configurations, endpoint slices and deletecollection', async () => {
    const admission = server.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'mesh-sidecar-injector' },
        webhooks: [
          {
            name: 'sidecar.mesh.io',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { service: { name: 'meshd', namespace: 'mesh-system' } },
          },
        ],
      },
    });
    const patched = await admission.readMutatingWebhookConfiguration({ name: 'mesh-sidecar-injector' });
    expect(patched.webhooks?.[0]?.name).toBe('sidecar.mesh.io');
    const discovery = server.kubeConfig().makeApiClient(DiscoveryV1Api);
    for (const name of ['reviews-a', 'reviews-b', 'ratings-a']) {
      await discovery.createNamespacedEndpointSlice({
        namespace: 'default',
        body: {
          metadata: { name, labels: { 'kubernetes.io/service-name': name.split('-')[0]! } },
          addressType: 'IPv4',
          endpoints: [{ addresses: ['10.0.0.1'] }],
        },
      });
    }
    await discovery.deleteCollectionNamespacedEndpointSlice({ namespace: 'default', labelSelector: 'kubernetes.io/service-name=reviews' });
    expect(server.objects('discovery.k8s.io/v1', 'EndpointSlice', 'default').map((o) => o.metadata?.name)).toEqual(['ratings-a']);
  });
});
