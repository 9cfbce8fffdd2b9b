import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';
import { setupConfigPipeline, type ConfigPipeline } from './testing/config-pipeline.js';
import { formatConfigKey } from '../names/index.js';
import type { PushRequest } from './model/config-updater.js';
import { loadSettings, newManager, newMetrics, newNopLogger } from '../runtime/index.js';
import type { KubeObject, MeshMetrics } from '../runtime/index.js';

const SECURITY = { group: 'security.mesh.io', version: 'v1beta1' };
const PA = { ...SECURITY, plural: 'peerauthentications' };
const AP = { ...SECURITY, plural: 'authorizationpolicies' };

function peerAuthentication(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'security.mesh.io/v1beta1', kind: 'PeerAuthentication', metadata: { name, namespace: 'foo' }, spec };
}

function authorizationPolicy(name: string): Record<string, unknown> {
  return { apiVersion: 'security.mesh.io/v1beta1', kind: 'AuthorizationPolicy', metadata: { name, namespace: 'foo' }, spec: { action: 'ALLOW', rules: [{}] } };
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
}

describe('config pipeline, Kubernetes mode against the API server double', () => {
  let server: ApiServerDouble;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let pipeline: ConfigPipeline;
  let metrics: MeshMetrics<'pilot-discovery'>;
  const requests: PushRequest[] = [];
  const logs: LogEntry[] = [];
  const stop = new AbortController();
  let running: Promise<void>;

  const keys = (request: PushRequest): string[] => request.configsUpdated.map(formatConfigKey);
  const pushFor = (key: string, from: number): Promise<PushRequest> =>
    waitFor(() => requests.slice(from).find((request) => keys(request).includes(key)), { description: `a push request for ${key}` });
  const stored = (kind: 'PeerAuthentication' | 'AuthorizationPolicy', name: string): KubeObject | undefined =>
    server.objects(`${SECURITY.group}/${SECURITY.version}`, kind, 'foo').find((object) => object.metadata?.name === name);
  const conditionsOf = (name: string): Condition[] =>
    (stored('PeerAuthentication', name)?.['status'] as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const condition = (name: string, type: string): Condition | undefined => conditionsOf(name).find((c) => c.type === type);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  beforeAll(async () => {
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const kubeConfig = server.kubeConfig();
    core = kubeConfig.makeApiClient(CoreV1Api);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    // The generated manifests, as `kubectl apply -f crds/generated/crds.yaml` would create them.
    const manifests = parseAllDocuments(await readFile(new URL('../crds/generated/crds.yaml', import.meta.url), 'utf8'));
    for (const manifest of manifests) {
      await extensions.createCustomResourceDefinition({ body: manifest.toJS() as V1CustomResourceDefinition });
    }

    for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name, labels: { team: name } } } });
    await core.createNamespacedService({
      namespace: 'foo',
      body: { metadata: { name: 'httpbin' }, spec: { selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000, targetPort: 80 }] } },
    });
    await core.createNamespacedPod({
      namespace: 'foo',
      body: {
        metadata: { name: 'httpbin-1', labels: { app: 'httpbin' }, annotations: { 'sidecar.mesh.io/status': 'injected' } },
        spec: { serviceAccountName: 'httpbin', containers: [{ name: 'httpbin', image: 'httpbin', ports: [{ containerPort: 80 }] }] },
      },
    });
    await core.patchNamespacedPodStatus({ namespace: 'foo', name: 'httpbin-1', body: { status: { podIP: '10.0.0.1' } } }, mergePatch);
    await kubeConfig.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: 'foo',
      body: {
        metadata: { name: 'httpbin-abc', labels: { 'kubernetes.io/service-name': 'httpbin' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 80 }],
        endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'httpbin-1', namespace: 'foo' } }],
      },
    });
    await core.createNamespacedConfigMap({ namespace: 'mesh-system', body: { metadata: { name: 'mesh' }, data: { mesh: 'trustDomain: example.org\n' } } });
    await custom.createNamespacedCustomObject({ ...PA, namespace: 'foo', body: peerAuthentication('strict', { mtls: { mode: 'STRICT' } }) });
    // The double does not validate against the schema, so an invalid object can be created.
    await custom.createNamespacedCustomObject({ ...PA, namespace: 'foo', body: peerAuthentication('bad', { portLevelMtls: { '80': { mode: 'DISABLE' } } }) });

    metrics = newMetrics('pilot-discovery');
    const manager = newManager({ log: newNopLogger() });
    pipeline = setupConfigPipeline(manager, {
      kubeConfig,
      registries: ['orch'],
      clusterId: 'cluster-k',
      domain: 'cluster.local',
      resyncMs: 0,
      qps: 1000,
      burst: 1000,
      meshConfigFile: '/nonexistent/mesh',
      rootNamespace: 'mesh-system',
      settings: loadSettings('pilot-discovery', { PILOT_ENABLE_STATUS: 'true', PILOT_ENABLE_ANALYSIS: 'true', PILOT_USE_ENDPOINT_SLICE: 'true' }),
      log: newRecordingLogger(logs),
      metrics,
      updater: { configUpdate: (request) => requests.push(request) },
      informerBackoff: { initialMs: 10, maxMs: 100 },
    });
    running = manager.start(stop.signal);
    await pipeline.waitForSync(AbortSignal.timeout(5000));
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await server.close();
  });

  test('the objects of the cluster appear in the model; the invalid one stays out', async () => {
    const { configStore, registry } = pipeline.model;
    expect(configStore.get('PeerAuthentication', 'foo', 'strict')?.resource.spec.mtls?.mode).toBe('STRICT');
    expect(configStore.get('PeerAuthentication', 'foo', 'bad')).toBeUndefined();
    expect(registry.namespace('foo')?.labels).toMatchObject({ team: 'foo' });
    expect(registry.serviceByHost('httpbin.foo.svc.cluster.local')?.name).toBe('httpbin');
    expect(registry.workload('foo', 'httpbin-1')).toMatchObject({ address: '10.0.0.1', hasSidecar: true, clusterId: 'cluster-k' });
    expect(registry.endpoints('foo', 'httpbin', 8000).map((e) => `${e.address}:${e.port} ${e.serviceAccount}`)).toEqual(['10.0.0.1:80 httpbin']);
    expect(pipeline.model.meshConfig().trustDomain).toBe('example.org');
    const rejected = (await metrics.counter('pilot_total_rejected_configs').get()).values.find((v) => v.labels['type'] === 'PeerAuthentication');
    expect(rejected?.value).toBe(1);
  });

  test('Secrets reach the model’s credentials through the API server; rotation is pushed, a bad edit keeps the last good one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kube-secret-'));
    try {
      const ca = await certificateAuthority(dir, 'ca');
      const [first, second] = await Promise.all([
        signedCertificate(dir, 'first', 'DNS:a.example.com', ca),
        signedCertificate(dir, 'second', 'DNS:a.example.com', ca),
      ]);
      const pem = async (cert: { keyFile: string; certFile: string }) => ({
        'tls.crt': await readFile(cert.certFile, 'utf8'),
        'tls.key': await readFile(cert.keyFile, 'utf8'),
      });
      const from = requests.length;
      await core.createNamespacedSecret({
        namespace: 'mesh-system',
        body: { metadata: { name: 'gw-cred' }, type: 'kubernetes.io/tls', stringData: await pem(first) },
      });
      await pushFor('Secret/mesh-system/gw-cred', from);
      expect(pipeline.model.credentials.get('mesh-system', 'gw-cred')?.certificateChain).toBe((await pem(first))['tls.crt']);

      const rotated = await pem(second);
      const beforeRotation = requests.length;
      await core.replaceNamespacedSecret({
        namespace: 'mesh-system',
        name: 'gw-cred',
        body: { metadata: { name: 'gw-cred' }, type: 'kubernetes.io/tls', stringData: rotated },
      });
      await pushFor('Secret/mesh-system/gw-cred', beforeRotation);
      expect(pipeline.model.credentials.get('mesh-system', 'gw-cred')?.certificateChain).toBe(rotated['tls.crt']);

      // The key of the first certificate with the second: refused by name and field.
      const mismatched = { 'tls.crt': rotated['tls.crt'], 'tls.key': (await pem(first))['tls.key'] };
      await core.replaceNamespacedSecret({
        namespace: 'mesh-system',
        name: 'gw-cred',
        body: { metadata: { name: 'gw-cred' }, type: 'kubernetes.io/tls', stringData: mismatched },
      });
      const warning = await waitFor(
        () => logs.find((entry) => entry.message === 'secret is not a usable TLS credential' && entry.fields['name'] === 'gw-cred'),
        { description: 'the bad secret logged' },
      );
      expect(warning.fields).toMatchObject({ namespace: 'mesh-system', field: 'data.tls.key', keptLastGood: true });
      expect(pipeline.model.credentials.get('mesh-system', 'gw-cred')?.certificateChain).toBe(rotated['tls.crt']);

      // A Secret without TLS keys is no credential; service account tokens are not even watched.
      await core.createNamespacedSecret({ namespace: 'foo', body: { metadata: { name: 'token' }, stringData: { token: 'x' } } });
      await core.createNamespacedSecret({
        namespace: 'mesh-system',
        body: {
          metadata: { name: 'sa-token', annotations: { 'kubernetes.io/service-account.name': 'default' } },
          type: 'kubernetes.io/service-account-token',
          stringData: rotated,
        },
      });
      await core.deleteNamespacedSecret({ namespace: 'mesh-system', name: 'gw-cred' });
      await waitFor(() => pipeline.model.credentials.get('mesh-system', 'gw-cred') === undefined, { description: 'the deleted secret gone' });
      expect(pipeline.model.credentials.get('foo', 'token')).toBeUndefined();
      expect(pipeline.model.credentials.get('mesh-system', 'sa-token')).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('status conditions and analysis messages are written on the objects', async () => {
    await waitFor(() => condition('bad', 'Accepted')?.status === 'False' && condition('strict', 'Accepted')?.status === 'True', {
      description: 'status written on both objects',
    });
    expect(condition('bad', 'Accepted')).toMatchObject({ reason: 'Invalid', observedGeneration: 1 });
    expect(condition('bad', 'Accepted')?.message).toMatch(/^spec\.portLevelMtls: expected a selector/);
    expect(condition('bad', 'Reconciled')).toMatchObject({ status: 'False', reason: 'Rejected' });
    expect(condition('strict', 'Reconciled')).toMatchObject({ status: 'True', reason: 'Reconciled' });
    const bad = stored('PeerAuthentication', 'bad')?.['status'] as { validationMessages?: unknown[]; observedGeneration?: number };
    expect(bad.validationMessages).toEqual([{ level: 'Error', path: 'spec.portLevelMtls', message: expect.stringMatching(/^expected a selector/) }]);
    expect(bad.observedGeneration).toBe(1);
    expect((stored('PeerAuthentication', 'strict')?.['status'] as Record<string, unknown>)['validationMessages']).toBeUndefined();
  });

  test('an invalid edit keeps the last good version serving and says so in the status; a fix clears it', async () => {
    await custom.patchNamespacedCustomObject({ ...PA, namespace: 'foo', name: 'strict', body: { spec: { mtls: { mode: 'SOMETIMES' } } } }, mergePatch);
    await waitFor(() => condition('strict', 'Reconciled')?.reason === 'LastGoodVersionServing', { description: 'last good version reported' });
    expect(condition('strict', 'Reconciled')?.message).toContain('generation 1');
    expect(condition('strict', 'Accepted')).toMatchObject({ status: 'False', observedGeneration: 2 });
    expect(pipeline.model.configStore.get('PeerAuthentication', 'foo', 'strict')?.resource.spec.mtls?.mode).toBe('STRICT');

    const from = requests.length;
    await custom.patchNamespacedCustomObject(
      { ...PA, namespace: 'foo', name: 'bad', body: { spec: { selector: { matchLabels: { app: 'httpbin' } } } } },
      mergePatch,
    );
    await pushFor('PeerAuthentication/foo/bad', from);
    await waitFor(() => condition('bad', 'Accepted')?.status === 'True', { description: 'the fixed object accepted' });
    const fixed = stored('PeerAuthentication', 'bad')?.['status'] as Record<string, unknown>;
    expect(fixed['validationMessages']).toBeUndefined();
  });

  test('status writes settle: an accepted object is not written again', async () => {
    await waitFor(() => condition('bad', 'Accepted')?.status === 'True' && condition('strict', 'Accepted')?.observedGeneration === 2, {
      description: 'statuses current',
    });
    const before = stored('PeerAuthentication', 'bad')?.metadata?.resourceVersion;
    const from = requests.length;
    await custom.createNamespacedCustomObject({ ...AP, namespace: 'foo', body: authorizationPolicy('allow-all') });
    await pushFor('AuthorizationPolicy/foo/allow-all', from);
    await waitFor(() => (stored('AuthorizationPolicy', 'allow-all')?.['status'] as { conditions?: unknown[] } | undefined)?.conditions, {
      description: 'the new object has its status',
    });
    expect(stored('PeerAuthentication', 'bad')?.metadata?.resourceVersion).toBe(before);
  });

  test('dropped watches lose nothing', async () => {
    const from = requests.length;
    server.faults.dropWatches();
    await custom.createNamespacedCustomObject({ ...AP, namespace: 'foo', body: authorizationPolicy('during-drop') });
    await custom.deleteNamespacedCustomObject({ ...AP, namespace: 'foo', name: 'allow-all' });
    await core.patchNamespacedService(
      { namespace: 'foo', name: 'httpbin', body: { spec: { ports: [{ name: 'http', port: 8001, targetPort: 80 }] } } },
      mergePatch,
    );
    await pushFor('AuthorizationPolicy/foo/during-drop', from);
    await pushFor('AuthorizationPolicy/foo/allow-all', from);
    await pushFor('Service/foo/httpbin', from);
    expect(pipeline.model.configStore.list('AuthorizationPolicy', 'foo').map((entry) => entry.name)).toEqual(['during-drop']);
    expect(pipeline.model.registry.service('foo', 'httpbin')?.ports.map((port) => port.port)).toEqual([8001]);
    expect(pipeline.model.registry.endpoints('foo', 'httpbin', 8001).map((e) => e.address)).toEqual(['10.0.0.1']);
  });

  test('a compacted history makes the informers relist; changes arrive once and nothing else is pushed again', async () => {
    const from = requests.length;
    const logsFrom = logs.length;
    server.faults.compactHistory();
    server.faults.dropWatches();
    await custom.createNamespacedCustomObject({ ...AP, namespace: 'foo', body: authorizationPolicy('after-compaction') });
    await core.patchNamespacedPod({ namespace: 'foo', name: 'httpbin-1', body: { metadata: { labels: { app: 'httpbin', version: 'v2' } } } }, mergePatch);
    await pushFor('AuthorizationPolicy/foo/after-compaction', from);
    const relabelled = await pushFor('Pod/foo/httpbin-1', from);
    // The endpoints carry the pod's labels, so the service's endpoints changed too.
    expect(relabelled).toMatchObject({ full: true, reasons: new Map([['proxy', 1]]) });
    expect(keys(relabelled)).toEqual(['Pod/foo/httpbin-1', 'Service/foo/httpbin']);
    // A marker written last: once it is in, every earlier change has been seen.
    await custom.createNamespacedCustomObject({ ...AP, namespace: 'foo', body: authorizationPolicy('marker') });
    await pushFor('AuthorizationPolicy/foo/marker', from);
    expect(requests.slice(from).flatMap(keys).sort()).toEqual([
      'AuthorizationPolicy/foo/after-compaction',
      'AuthorizationPolicy/foo/marker',
      'Pod/foo/httpbin-1',
      'Service/foo/httpbin',
    ]);
    expect(pipeline.model.configStore.list('AuthorizationPolicy', 'foo').map((entry) => entry.name)).toEqual(['after-compaction', 'during-drop', 'marker']);
    expect(pipeline.model.registry.workload('foo', 'httpbin-1')?.labels).toEqual({ app: 'httpbin', version: 'v2' });
    const relisted = logs
      .slice(logsFrom)
      .filter((entry) => entry.message === 'resource version expired, relisting')
      .map((entry) => entry.fields['source']);
    expect(relisted).toEqual(expect.arrayContaining(['peerauthentications', 'pods']));
  });
  test('PILOT_ENABLE_ANALYSIS: a conflicting policy gets an analysis message in its status, and loses it once fixed', async () => {
    const DR = { group: 'networking.mesh.io', version: 'v1alpha3', plural: 'destinationrules' };
    const drStatus = (): { validationMessages?: { type?: { code: string } }[] } | undefined =>
      server.objects('networking.mesh.io/v1alpha3', 'DestinationRule', 'shop').find((o) => o.metadata?.name === 'reviews-plain')?.['status'] as never;
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
    await core.createNamespacedService({
      namespace: 'shop',
      body: { metadata: { name: 'reviews' }, spec: { selector: { app: 'reviews' }, ports: [{ name: 'http', port: 9080 }] } },
    });
    await core.createNamespacedPod({
      namespace: 'shop',
      body: { metadata: { name: 'reviews-1', labels: { app: 'reviews' } }, spec: { containers: [{ name: 'reviews', image: 'reviews' }] } },
    });
    const strict = {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'PeerAuthentication',
      metadata: { name: 'reviews-strict', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'reviews' } }, mtls: { mode: 'STRICT' } },
    };
    await custom.createNamespacedCustomObject({ ...PA, namespace: 'shop', body: strict });
    const createdAt = Date.now();
    await custom.createNamespacedCustomObject({
      ...DR,
      namespace: 'shop',
      body: {
        apiVersion: 'networking.mesh.io/v1alpha3',
        kind: 'DestinationRule',
        metadata: { name: 'reviews-plain', namespace: 'shop' },
        spec: { host: 'reviews.shop.svc.cluster.local', trafficPolicy: { tls: { mode: 'DISABLE' } } },
      },
    });
    await waitFor(() => drStatus()?.validationMessages?.some((m) => m.type?.code === 'MSH0113'), {
      description: 'the mTLS conflict in the DestinationRule status',
      timeoutMs: 10_000,
    });
    const latencyMs = Date.now() - createdAt;
    expect(drStatus()?.validationMessages).toEqual([
      {
        level: 'Error',
        path: '',
        type: { code: 'MSH0113', name: 'MTLSPolicyConflict' },
        message:
          'A DestinationRule and Policy are in conflict with regards to mTLS for host reviews.shop.svc.cluster.local. The DestinationRule "shop/reviews-plain" specifies that mTLS must be false but the Policy object "shop/reviews-strict" specifies STRICT.',
      },
    ]);
    expect(logs.some((entry) => entry.message.startsWith('analysis: Error [MSH0113] (DestinationRule reviews-plain.shop)'))).toBe(true);
    await custom.patchNamespacedCustomObject(
      { ...DR, namespace: 'shop', name: 'reviews-plain', body: { spec: { trafficPolicy: { tls: { mode: 'MESH_MUTUAL' } } } } },
      mergePatch,
    );
    await waitFor(() => drStatus() !== undefined && drStatus()?.validationMessages === undefined, {
      description: 'the message removed once fixed',
      timeoutMs: 10_000,
    });
    // For the note: how long the message took (the debounce is PILOT_DEBOUNCE_AFTER, 100 ms by default).
    process.stdout.write(`analysis status latency: ${latencyMs} ms\n`);
  });

  test('PILOT_ENABLE_ANALYSIS: a CUSTOM policy whose provider the mesh config lacks says so in its status (its rules are denied)', async () => {
    const apStatus = (): { validationMessages?: { type?: { code: string }; message?: string }[] } | undefined =>
      server.objects('security.mesh.io/v1beta1', 'AuthorizationPolicy', 'foo').find((o) => o.metadata?.name === 'ext-authz')?.['status'] as never;
    await custom.createNamespacedCustomObject({
      ...AP,
      namespace: 'foo',
      body: {
        apiVersion: 'security.mesh.io/v1beta1',
        kind: 'AuthorizationPolicy',
        metadata: { name: 'ext-authz', namespace: 'foo' },
        spec: { action: 'CUSTOM', provider: { name: 'opa' }, rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] },
      },
    });
    await waitFor(() => apStatus()?.validationMessages?.some((m) => m.type?.code === 'MSH0101'), {
      description: 'the unknown provider in the policy status',
      timeoutMs: 10_000,
    });
    expect(apStatus()?.validationMessages?.find((m) => m.type?.code === 'MSH0101')?.message).toBe('Referenced extension provider not found: "opa"');
    await custom.deleteNamespacedCustomObject({ ...AP, namespace: 'foo', name: 'ext-authz' });
  });
});
