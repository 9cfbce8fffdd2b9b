import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';
import { setupConfigPipeline, type ConfigPipeline } from './testing/config-pipeline.js';
import { formatConfigKey } from '../names/index.js';
import type { PushRequest } from './model/config-updater.js';
import { loadSettings, newManager, newMetrics, newNopLogger, UsageError } from '../runtime/index.js';
import type { MeshMetrics } from '../runtime/index.js';

const NAMESPACES = `
apiVersion: v1
kind: Namespace
metadata: { name: mesh-system }
---
apiVersion: v1
kind: Namespace
metadata: { name: foo, labels: { sidecar.mesh.io/inject: "true" } }
`;

const WORKLOADS = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { app: httpbin }
  ports: [{ name: http, port: 8000, targetPort: 80 }]
---
apiVersion: v1
kind: Pod
metadata:
  name: httpbin-1
  namespace: foo
  labels: { app: httpbin, security.mesh.io/tlsMode: mesh }
spec:
  serviceAccountName: httpbin
  containers: [{ name: httpbin, ports: [{ containerPort: 80 }] }]
status: { podIP: 127.0.2.10 }
`;

function peerAuthentication(name: string, mode: string, extra = ''): string {
  return `
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: ${name}, namespace: foo }
spec:
  mtls: { mode: ${mode} }${extra}
`;
}

const AUTHZ = `
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-headers, namespace: foo }
spec:
  action: DENY
  rules: [{ to: [{ operation: { paths: ["/headers"] } }] }]
`;

/** portLevelMtls without a selector: rejected by validation. */
const INVALID_PA = `
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: bad, namespace: foo }
spec:
  portLevelMtls: { "80": { mode: DISABLE } }
`;

describe('config pipeline, config folder mode', () => {
  let dir: string;
  let pipeline: ConfigPipeline;
  let metrics: MeshMetrics<'pilot-discovery'>;
  const requests: PushRequest[] = [];
  const logs: LogEntry[] = [];
  const stop = new AbortController();
  let running: Promise<void>;

  const put = async (path: string, text: string): Promise<void> => {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  };
  const keys = (request: PushRequest): string[] => request.configsUpdated.map(formatConfigKey);
  /** Waits for a push request after `from` naming `key`. */
  const pushFor = (key: string, from: number): Promise<PushRequest> =>
    waitFor(() => requests.slice(from).find((request) => keys(request).includes(key)), { description: `a push request for ${key}` });
  const rejectedCount = async (type: string): Promise<number> =>
    (await metrics.counter('pilot_total_rejected_configs').get()).values.find((v) => v.labels['type'] === type)?.value ?? 0;
  const storedMode = (name: string): unknown => pipeline.model.configStore.get('PeerAuthentication', 'foo', name)?.resource.spec.mtls?.mode;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'config-pipeline-'));
    await put('namespaces.yaml', NAMESPACES);
    await put('foo/workloads.yaml', WORKLOADS);
    await put('foo/policies/strict.yaml', peerAuthentication('strict', 'STRICT'));
    metrics = newMetrics('pilot-discovery');
    const manager = newManager({ log: newNopLogger() });
    pipeline = setupConfigPipeline(manager, {
      configDir: dir,
      registries: ['orch'],
      clusterId: 'cluster-a',
      domain: 'cluster.local',
      resyncMs: 0,
      qps: 80,
      burst: 160,
      meshConfigFile: join(dir, 'absent-mesh-config'),
      rootNamespace: 'mesh-system',
      settings: loadSettings('pilot-discovery', {}),
      log: newRecordingLogger(logs),
      metrics,
      updater: { configUpdate: (request) => requests.push(request) },
      configDirOptions: { debounceMs: 5, rescanIntervalMs: 60_000 },
    });
    running = manager.start(stop.signal);
    await pipeline.waitForSync(AbortSignal.timeout(5000));
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await rm(dir, { recursive: true, force: true });
  });

  test('after sync the model holds the folder: policies, namespaces, services, workloads, endpoints', () => {
    expect(pipeline.sourcesSynced()).toBe(true);
    expect(storedMode('strict')).toBe('STRICT');
    const { registry } = pipeline.model;
    expect(registry.namespace('foo')?.labels).toEqual({ 'sidecar.mesh.io/inject': 'true' });
    expect(registry.serviceByHost('httpbin.foo.svc.cluster.local')?.ports).toEqual([{ name: 'http', port: 8000, targetPort: 80, protocol: 'TCP' }]);
    expect(registry.workload('foo', 'httpbin-1')).toMatchObject({ address: '127.0.2.10', hasSidecar: true, serviceAccount: 'httpbin', clusterId: 'cluster-a' });
    expect(registry.endpoints('foo', 'httpbin', 8000).map((e) => `${e.address}:${e.port}`)).toEqual(['127.0.2.10:80']);
    expect(pipeline.model.meshConfig().rootNamespace).toBe('mesh-system');
    // Each object became a push request naming it.
    const named = requests.flatMap(keys);
    expect(named).toEqual(
      expect.arrayContaining(['PeerAuthentication/foo/strict', 'Namespace/foo', 'Namespace/mesh-system', 'Service/foo/httpbin', 'Pod/foo/httpbin-1']),
    );
    expect(requests.find((r) => keys(r).includes('PeerAuthentication/foo/strict'))).toMatchObject({ full: true, reasons: new Map([['config', 1]]) });
  });

  test('a new file adds its policy with one push request for its key', async () => {
    const from = requests.length;
    await put('foo/policies/authz.yaml', AUTHZ);
    const request = await pushFor('AuthorizationPolicy/foo/deny-headers', from);
    expect(request).toMatchObject({
      full: true,
      reasons: new Map([['config', 1]]),
      configsUpdated: [{ kind: 'AuthorizationPolicy', namespace: 'foo', name: 'deny-headers' }],
    });
    expect(pipeline.model.configStore.get('AuthorizationPolicy', 'foo', 'deny-headers')?.resource.spec.action).toBe('DENY');
  });

  test('a change is applied with a new store version; a rewrite with the same content pushes nothing', async () => {
    const versionBefore = pipeline.model.configStore.version();
    const from = requests.length;
    // Same content, other formatting: no model change.
    await put('foo/policies/authz.yaml', `# reformatted\n${AUTHZ.replace('action: DENY', 'action:   DENY')}`);
    await put('foo/policies/strict.yaml', peerAuthentication('strict', 'PERMISSIVE'));
    await pushFor('PeerAuthentication/foo/strict', from);
    expect(storedMode('strict')).toBe('PERMISSIVE');
    expect(pipeline.model.configStore.version()).toBe(versionBefore + 1);
    expect(requests.slice(from).flatMap(keys)).toEqual(['PeerAuthentication/foo/strict']);
  });

  test('a ServiceEntry pushes as a policy does; a WorkloadGroup is stored and pushes nothing (not translated yet)', async () => {
    const from = requests.length;
    await put(
      'foo/registry/external.yaml',
      'apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: external, namespace: foo}\nspec: {hosts: [api.example.com], resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}]}\n',
    );
    await pushFor('ServiceEntry/foo/external', from);
    expect(pipeline.model.configStore.get('ServiceEntry', 'foo', 'external')?.resource.spec.hosts).toEqual(['api.example.com']);
    const afterEntry = requests.length;
    await put(
      'foo/registry/group.yaml',
      'apiVersion: networking.mesh.io/v1\nkind: WorkloadGroup\nmetadata: {name: vms, namespace: foo}\nspec: {template: {serviceAccount: vm}}\n',
    );
    await put('foo/policies/wg-marker.yaml', peerAuthentication('wg-marker', 'STRICT'));
    await pushFor('PeerAuthentication/foo/wg-marker', afterEntry);
    await waitFor(() => pipeline.model.configStore.get('WorkloadGroup', 'foo', 'vms') !== undefined, { description: 'the WorkloadGroup stored' });
    expect(requests.slice(afterEntry).flatMap(keys)).toEqual(['PeerAuthentication/foo/wg-marker']);
  });

  test('an invalid policy stays out, is logged and counted, and the others are unaffected', async () => {
    const from = requests.length;
    await put('foo/policies/bad.yaml', INVALID_PA);
    await put('foo/policies/other.yaml', peerAuthentication('other', 'DISABLE'));
    await pushFor('PeerAuthentication/foo/other', from);
    await waitFor(async () => (await rejectedCount('PeerAuthentication')) === 1, { description: 'the rejection counted' });
    expect(pipeline.model.configStore.get('PeerAuthentication', 'foo', 'bad')).toBeUndefined();
    expect(storedMode('other')).toBe('DISABLE');
    expect(storedMode('strict')).toBe('PERMISSIVE');
    expect(requests.slice(from).flatMap(keys)).not.toContain('PeerAuthentication/foo/bad');
    const rejection = logs.find((entry) => entry.message === 'config rejected' && entry.fields['name'] === 'bad');
    expect(rejection?.level).toBe('error');
    expect(rejection?.fields['errors']).toEqual([expect.stringMatching(/^spec\.portLevelMtls: expected a selector/)]);
  });

  test('an invalid edit keeps the last good version serving until it is fixed', async () => {
    const rejectedBefore = await rejectedCount('PeerAuthentication');
    await put('foo/policies/strict.yaml', peerAuthentication('strict', 'SOMETIMES'));
    await waitFor(async () => (await rejectedCount('PeerAuthentication')) === rejectedBefore + 1, { description: 'the rejection counted' });
    expect(storedMode('strict')).toBe('PERMISSIVE');
    expect(logs.some((entry) => entry.message === 'config rejected, the last good version keeps serving' && entry.fields['name'] === 'strict')).toBe(true);
    const from = requests.length;
    await put('foo/policies/strict.yaml', peerAuthentication('strict', 'STRICT'));
    await pushFor('PeerAuthentication/foo/strict', from);
    expect(storedMode('strict')).toBe('STRICT');
  });

  test('a malformed file keeps its last good objects serving', async () => {
    const from = requests.length;
    await put('foo/policies/other.yaml', 'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: other\n');
    // A later, valid change shows the broken file has been scanned meanwhile.
    await put('foo/policies/marker.yaml', peerAuthentication('marker', 'STRICT'));
    await pushFor('PeerAuthentication/foo/marker', from);
    expect(pipeline.configDir?.describeProblems().map((problem) => problem.reason)).toContain('syntax');
    expect(storedMode('other')).toBe('DISABLE');
    expect(requests.slice(from).flatMap(keys)).not.toContain('PeerAuthentication/foo/other');
  });

  test('deleting a file deletes its objects with a push request for each', async () => {
    const from = requests.length;
    await unlink(join(dir, 'foo/policies/authz.yaml'));
    const request = await pushFor('AuthorizationPolicy/foo/deny-headers', from);
    expect(request).toMatchObject({ full: true, reasons: new Map([['config', 1]]) });
    expect(pipeline.model.configStore.get('AuthorizationPolicy', 'foo', 'deny-headers')).toBeUndefined();
  });

  test('an endpoint-only change is a push with full: false naming the service', async () => {
    const from = requests.length;
    await put('foo/workloads.yaml', WORKLOADS.replace('127.0.2.10', '127.0.2.11'));
    const request = await pushFor('Service/foo/httpbin', from);
    expect(request).toMatchObject({ full: false, reasons: new Map([['endpoint', 1]]) });
    expect(keys(request)).toEqual(['Service/foo/httpbin', 'Pod/foo/httpbin-1']);
    expect(pipeline.model.registry.endpoints('foo', 'httpbin').map((e) => e.address)).toEqual(['127.0.2.11']);
  });

  test('a pod relabelled away from its service is a full push for the proxy', async () => {
    const from = requests.length;
    await put('foo/workloads.yaml', WORKLOADS.replace('127.0.2.10', '127.0.2.11').replace('app: httpbin, security', 'app: other, security'));
    const request = await pushFor('Pod/foo/httpbin-1', from);
    expect(request).toMatchObject({ full: true, reasons: new Map([['proxy', 1]]) });
    expect(keys(request)).toEqual(['Pod/foo/httpbin-1', 'Service/foo/httpbin']);
    expect(pipeline.model.registry.endpoints('foo', 'httpbin')).toEqual([]);
  });

  test('a service change is a full push; the mesh ConfigMap in the folder sets the mesh config', async () => {
    let from = requests.length;
    await put('foo/svc2.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: foo}\nspec: {ports: [{port: 80}]}\n');
    expect(await pushFor('Service/foo/web', from)).toMatchObject({ full: true, reasons: new Map([['service', 1]]) });

    from = requests.length;
    await put(
      'mesh-system/mesh.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mesh, namespace: mesh-system}\ndata:\n  mesh: |\n    enableAutoMtls: false\n',
    );
    expect(await pushFor('MeshConfig/mesh-system/mesh', from)).toMatchObject({ full: true, reasons: new Map([['mesh-config', 1]]) });
    expect(pipeline.model.meshConfig().enableAutoMtls).toBe(false);

    const rejectedBefore = await rejectedCount('MeshConfig');
    await put(
      'mesh-system/mesh.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mesh, namespace: mesh-system}\ndata:\n  mesh: "enableAutoMtls: maybe"\n',
    );
    await waitFor(async () => (await rejectedCount('MeshConfig')) === rejectedBefore + 1, { description: 'the bad mesh config counted' });
    expect(pipeline.model.meshConfig().enableAutoMtls).toBe(false);
  });
});

describe('config pipeline options', () => {
  const base = {
    registries: ['orch'],
    clusterId: 'c',
    domain: 'cluster.local',
    resyncMs: 0,
    qps: 80,
    burst: 160,
    meshConfigFile: '/nonexistent/mesh',
    rootNamespace: 'mesh-system',
    settings: loadSettings('pilot-discovery', {}),
    log: newNopLogger(),
    metrics: newMetrics('pilot-discovery'),
    updater: { configUpdate: () => undefined },
  };

  test.each([
    ['the Mock registry', { configDir: '/tmp', registries: ['orch', 'Mock'] }, 'registry Mock is not supported yet'],
    ['an unknown registry', { configDir: '/tmp', registries: ['consul'] }, 'unknown registry "consul": expected orch or Mock'],
    ['no source at all', {}, /^no config source/],
  ])('%s is a usage error', (_name, overrides, message) => {
    const attempt = (): unknown => setupConfigPipeline(newManager({ log: newNopLogger() }), { ...base, ...overrides });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(message);
  });
});

describe('config pipeline, mesh config sources', () => {
  let dir: string;
  let pipeline: ConfigPipeline;
  const stop = new AbortController();
  let running: Promise<void>;
  const configMap = (name: string, mesh: string): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: mesh-system}\ndata:\n  mesh: |\n${mesh.replace(/^/gm, '    ')}\n`;
  const meshConfig = (): { trustDomain: string; enableAutoMtls: boolean } => {
    const { trustDomain, enableAutoMtls } = pipeline.model.meshConfig();
    return { trustDomain, enableAutoMtls };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'config-pipeline-mesh-'));
    await mkdir(join(dir, 'config'));
    await writeFile(join(dir, 'config', 'shared.yaml'), configMap('shared-mesh', 'enableAutoMtls: false\ntrustDomain: shared.example'));
    await writeFile(join(dir, 'mesh'), 'trustDomain: file.example\n');
    const manager = newManager({ log: newNopLogger() });
    pipeline = setupConfigPipeline(manager, {
      configDir: join(dir, 'config'),
      registries: ['orch'],
      clusterId: 'c',
      domain: 'cluster.local',
      resyncMs: 0,
      qps: 80,
      burst: 160,
      meshConfigFile: join(dir, 'mesh'),
      rootNamespace: 'mesh-system',
      settings: loadSettings('pilot-discovery', { SHARED_MESH_CONFIG: 'shared-mesh' }),
      log: newNopLogger(),
      metrics: newMetrics('pilot-discovery'),
      updater: { configUpdate: () => undefined },
      configDirOptions: { debounceMs: 5, rescanIntervalMs: 60_000 },
    });
    running = manager.start(stop.signal);
    await pipeline.waitForSync(AbortSignal.timeout(5000));
  });

  afterAll(async () => {
    stop.abort();
    await running;
    await rm(dir, { recursive: true, force: true });
  });

  test('the --meshConfig file over the shared ConfigMap, the mesh ConfigMap over the file', async () => {
    await waitFor(() => meshConfig().enableAutoMtls === false, { description: 'the shared config merged in' });
    expect(meshConfig()).toEqual({ trustDomain: 'file.example', enableAutoMtls: false });

    await writeFile(join(dir, 'config', 'mesh.yaml'), configMap('mesh', 'trustDomain: configmap.example'));
    await waitFor(() => meshConfig().trustDomain === 'configmap.example', { description: 'the mesh ConfigMap applied' });
    expect(meshConfig().enableAutoMtls).toBe(false);

    await unlink(join(dir, 'config', 'mesh.yaml'));
    await waitFor(() => meshConfig().trustDomain === 'file.example', { description: 'back to the file' });

    await writeFile(join(dir, 'mesh'), 'trustDomain: edited.example\n');
    await waitFor(() => meshConfig().trustDomain === 'edited.example', { description: 'the file edit applied' });
    expect(meshConfig().enableAutoMtls).toBe(false);
  });
});
