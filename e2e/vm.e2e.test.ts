import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runMeshctlInProcess } from '../cli/testing/run-meshctl.js';
import { processEnvironment } from '../runtime/index.js';
import { curl, echoedHeaders } from '../testing/curl.js';
import { kubectl } from '../testing/kubectl.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';
import { startSampleBackend, type SampleBackend } from './local-mesh/sample-backend.js';

// A VM joins the mesh (issue 35 item 4), in Kubernetes mode: `meshctl x workload entry configure`
// writes the VM's files from its WorkloadGroup, a `pilot-agent proxy` outside the pod model (no
// kubelet, its own address) starts from exactly those files, registers itself (a WorkloadEntry
// the Service `ratings` selects), gets a certificate, serves and calls meshed pods with mutual
// TLS, and its entry goes once it stops.
const BLOCK = 47;
const VM_IP = `127.${BLOCK}.9.20`;
const VM_APP_IP = `127.${BLOCK}.109.20`;
const VM_PORT = 9080;
const ENTRY = `ratings-${VM_IP}`;
const GROUP = `apiVersion: networking.mesh.io/v1
kind: WorkloadGroup
metadata: { name: ratings, namespace: vm }
spec:
  metadata: { labels: { app: ratings } }
  template: { serviceAccount: ratings, ports: { http: ${VM_PORT} } }
  probe: { httpGet: { host: ${VM_APP_IP}, path: /ip, port: ${VM_PORT} }, periodSeconds: 1 }
`;
const VM_OBJECTS = `apiVersion: v1
kind: Namespace
metadata: { name: vm }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: ratings, namespace: vm }
---
apiVersion: v1
kind: Service
metadata: { name: ratings, namespace: vm }
spec:
  selector: { app: ratings }
  ports: [{ name: http, port: ${VM_PORT}, targetPort: ${VM_PORT}, protocol: TCP }]
---
${GROUP}---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: ratings-internal, namespace: vm }
spec:
  hosts: [ratings.internal.example]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 9080, name: http, protocol: HTTP }]
  workloadSelector: { labels: { app: ratings } }
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: ratings-internal, namespace: vm }
spec:
  host: ratings.internal.example
  trafficPolicy: { tls: { mode: MESH_MUTUAL } }
`;
const DENY_ADMIN = `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ratings-deny-admin, namespace: vm }
spec:
  selector: { matchLabels: { app: ratings } }
  action: DENY
  rules: [{ to: [{ operation: { paths: [/admin] } }] }]
`;
const MESH_STRICT = `apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: mesh-system }
spec: { mtls: { mode: STRICT } }
`;

let workDir: string;
let mesh: LocalMesh;
let vm: ChildProcess | undefined;
let app: SampleBackend[] = [];

const get = (args: readonly string[]) => kubectl({ kubeconfig: mesh.kubeconfigPath ?? '', home: workDir }, args);
const entryExists = async (): Promise<boolean> => (await get(['get', 'workloadentries.networking.mesh.io', ENTRY, '-n', 'vm', '-o', 'name'])).code === 0;

/** `KEY='value'` lines as written by `x workload entry configure` (values single-quoted, `'\''` for a quote). */
function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)='(.*)'$/.exec(line);
    if (match?.[1] !== undefined) env[match[1]] = (match[2] ?? '').replaceAll("'\\''", "'");
  }
  return env;
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'vm-e2e-'));
  const samples = join(workDir, 'samples');
  mkdirSync(samples);
  for (const file of ['namespaces.yaml', 'workloads-foo.yaml', 'workloads-legacy.yaml'])
    cpSync(join(PROJECT_ROOT, 'deploy/samples/config', file), join(samples, file));
  mesh = await startLocalMesh({
    workDir: join(workDir, 'mesh'),
    samples,
    orchestrator: 'kubernetes',
    addressBlock: BLOCK,
    daemonEnv: { PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: '1s' },
  });
  await mesh.waitReady(60_000);
  await mesh.apply('vm.yaml', VM_OBJECTS);
  // The daemon publishes the root certificate into the new namespace.
  await waitFor(async () => (await get(['get', 'configmap', 'mesh-ca-root-cert', '-n', 'vm', '-o', 'name'])).code === 0, {
    timeoutMs: 10_000,
    description: 'the root certificate ConfigMap in vm',
  });

  // The operator's side: the VM's files.
  const files = join(workDir, 'vm-files');
  const kubeconfig = mesh.kubeconfigPath ?? '';
  writeFileSync(join(workDir, 'group.yaml'), GROUP);
  const configured = await runMeshctlInProcess([
    '-c',
    kubeconfig,
    'x',
    'workload',
    'entry',
    'configure',
    '-f',
    join(workDir, 'group.yaml'),
    '-o',
    files,
    '--clusterID',
    'Kubernetes',
    '--autoregister',
    '--workloadIP',
    VM_IP,
    '--ingressIP',
    '127.0.0.1',
  ]);
  expect(configured.stdout).toContain(`Configuration generation into directory ${files} was successful`);

  // The VM's side: the files where the agent reads them, the app, the agent.
  const root = join(workDir, 'vm');
  mkdirSync(join(root, 'var/run/secrets/tokens'), { recursive: true });
  mkdirSync(join(root, 'var/run/secrets/mesh'), { recursive: true });
  cpSync(join(files, 'mesh-token'), join(root, 'var/run/secrets/tokens/mesh-token'));
  cpSync(join(files, 'root-cert.pem'), join(root, 'var/run/secrets/mesh/root-cert.pem'));
  app = await startSampleBackend(VM_APP_IP, [VM_PORT]);
  const env = {
    PATH: processEnvironment()['PATH'] ?? '',
    ...parseEnvFile(readFileSync(join(files, 'cluster.env'), 'utf8')),
    ...parseEnvFile(readFileSync(join(files, 'sidecar.env'), 'utf8')),
    // The local mesh's one deviation: the VM's app listens on an address of its own, as pods' apps do here.
    MESH_META_APP_ADDRESS: VM_APP_IP,
  };
  vm = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/pilot-agent.js'), 'proxy', 'sidecar', '--meshConfig', join(files, 'mesh.yaml')], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(async () => (await fetch(`http://${VM_IP}:15021/healthz/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    description: 'the VM proxy ready',
  });
}, 150_000);

afterAll(async () => {
  vm?.kill('SIGKILL');
  for (const server of app) await server.close();
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('a VM joins the mesh', () => {
  test('it registers itself: a WorkloadEntry of its group, with its address, labels and identity', async () => {
    await waitFor(entryExists, { timeoutMs: 10_000, description: 'the auto-registered WorkloadEntry' });
    const entry = JSON.parse((await get(['get', 'workloadentries.networking.mesh.io', ENTRY, '-n', 'vm', '-o', 'json'])).stdout) as {
      metadata: { ownerReferences?: { kind: string; name: string }[] };
      spec: { address: string; labels?: Record<string, string>; serviceAccount?: string };
    };
    expect(entry.spec).toMatchObject({ address: VM_IP, serviceAccount: 'ratings', labels: expect.objectContaining({ app: 'ratings' }) });
    expect(entry.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'WorkloadGroup', name: 'ratings' })]);
  });

  test('pod → VM and VM → pod, with mutual TLS both ways', async () => {
    const toVm = await waitFor(
      async () => {
        const result = await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/headers`]);
        return result.code === '200' ? result : undefined;
      },
      { timeoutMs: 15_000, description: 'the VM reachable from a pod' },
    );
    expect(echoedHeaders(toVm.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
    const fromVm = await curl(['-x', `http://${VM_IP}:15001`, 'http://httpbin.foo:8000/headers']);
    expect(fromVm.code).toBe('200');
    expect(echoedHeaders(fromVm.body)['X-Forwarded-Client-Cert']).toContain('URI=spiffe://cluster.local/ns/vm/sa/ratings');
  });

  test('health from the group probe: the app stops, the entry turns unhealthy and pods stop sending to it; back, and they send again', async () => {
    const healthy = async (): Promise<string | undefined> => {
      const entry = JSON.parse((await get(['get', 'workloadentries.networking.mesh.io', ENTRY, '-n', 'vm', '-o', 'json'])).stdout) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      return entry.status?.conditions?.find((condition) => condition.type === 'Healthy')?.status;
    };
    expect(await healthy()).toBe('True');
    for (const server of app) await server.close();
    await waitFor(async () => (await healthy()) === 'False', { timeoutMs: 10_000, description: 'Healthy=False' });
    await waitFor(async () => (await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/ip`])).code === '503', {
      timeoutMs: 10_000,
      description: 'no healthy endpoint for pods',
    });
    app = await startSampleBackend(VM_APP_IP, [VM_PORT]);
    await waitFor(async () => (await healthy()) === 'True', { timeoutMs: 10_000, description: 'Healthy=True again' });
    await waitFor(async () => (await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/ip`])).code === '200', {
      timeoutMs: 10_000,
      description: 'the VM reachable again',
    });
  });

  test('STRICT on both sides: a plaintext client is refused by the VM; the meshed calls go on', async () => {
    expect((await curl([`http://${VM_IP}:${VM_PORT}/ip`])).code).toBe('200');
    await mesh.apply('strict.yaml', MESH_STRICT);
    await waitFor(async () => (await curl([`http://${VM_IP}:${VM_PORT}/ip`])).code === '000', { timeoutMs: 10_000, description: 'STRICT at the VM' });
    expect((await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/ip`])).code).toBe('200');
    expect((await curl(['-x', `http://${VM_IP}:15001`, 'http://httpbin.foo:8000/ip'])).code).toBe('200');
    await mesh.remove('strict.yaml');
  });

  test('meshctl proxy-status lists the VM proxy (named by its host, as the reference names VMs) SYNCED', async () => {
    // The STRICT removal just before may still be on its way: SYNCED once it has been taken.
    const line = await waitFor(
      async () => {
        const result = await runMeshctlInProcess(['-c', mesh.kubeconfigPath ?? '', 'ps'], { HOME: '/nonexistent' });
        const found = result.stdout.split('\n').find((candidate) => candidate.startsWith(`${hostname()}.vm `));
        return found !== undefined && !/STALE|NOT SENT/.test(found) ? found : undefined;
      },
      { timeoutMs: 10_000, description: 'the VM proxy in proxy-status, synced' },
    );
    expect(line).toMatch(/ +Kubernetes +SYNCED +SYNCED +SYNCED +SYNCED +IGNORED +meshd-local +\S+$/);
  });

  describe('meshctl sees the VM proxy: named by its proxy ID or by workloadentry/<name>, its config from the daemon', () => {
    const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', mesh.kubeconfigPath ?? '', ...args], { HOME: '/nonexistent' });
    const vmId = () => `${hostname()}.vm`;

    test('proxy-config cluster and endpoint: the same answer for both names; the entry host and its DestinationRule', async () => {
      const byId = await meshctl('pc', 'cluster', vmId(), '--fqdn', 'ratings.internal.example');
      expect(byId.stderr).toBe('');
      expect(byId.stdout).toMatch(/ratings\.internal\.example +9080 +- +outbound +EDS +ratings-internal\.vm/);
      expect((await meshctl('pc', 'cluster', `workloadentry/${ENTRY}`, '-n', 'vm', '--fqdn', 'ratings.internal.example')).stdout).toBe(byId.stdout);
      const endpoints = await meshctl('pc', 'endpoint', `we/${ENTRY}.vm`, '--cluster', 'outbound|8000||httpbin.foo.svc.cluster.local');
      expect(endpoints.stdout).toMatch(/:\d+ +HEALTHY +OK +outbound\|8000\|\|httpbin\.foo\.svc\.cluster\.local/);
      const log = await meshctl('pc', 'log', vmId(), '--level', 'debug');
      expect(log.code).toBe(64);
      expect(log.stderr).toContain(`${vmId()} is a VM's proxy`);
      const unknown = await meshctl('pc', 'cluster', 'workloadentry/nope.vm');
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain(`"nope.vm" not found`);
    });

    test('proxy-status of the VM compares its own dump (--file) with what the daemon sent; without --file it says how to get one', async () => {
      const refused = await meshctl('ps', vmId());
      expect(refused.code).toBe(64);
      expect(refused.stderr).toContain('give its config dump with --file');
      const dumpFile = join(workDir, 'vm-config-dump.json');
      writeFileSync(dumpFile, await (await fetch(`http://${VM_IP}:15000/config_dump?include_eds`)).text());
      const compared = await meshctl('ps', vmId(), '--file', dumpFile);
      expect(compared.stderr).toBe('');
      expect(compared.stdout).toContain('Clusters Match');
      expect(compared.stdout).toContain('Listeners Match');
    });

    test('x describe pod: the VM, its entry, the Service and the ServiceEntry selecting it, their config, its mTLS mode and policies', async () => {
      await mesh.apply('deny-admin.yaml', DENY_ADMIN);
      const described = await waitFor(
        async () => {
          const result = await meshctl('x', 'describe', 'pod', `we/${ENTRY}`, '-n', 'vm');
          return result.stdout.includes('RBAC policies: ratings-deny-admin.vm') ? result : undefined;
        },
        { timeoutMs: 10_000, description: 'the deny policy at the VM proxy' },
      );
      expect(described.stderr).toBe('');
      expect(described.stdout).toContain(
        [
          `VM: ${vmId()}`,
          `   WorkloadEntry: ${ENTRY}`,
          `   Address: ${VM_IP}`,
          `   Ports: ${VM_PORT} (http)`,
          "Suggestion: add 'version' label to WorkloadEntry for mesh telemetry.",
          '--------------------',
          'Service: ratings',
          `   Port: http ${VM_PORT}/HTTP targets VM port ${VM_PORT}`,
          '--------------------',
          'ServiceEntry: ratings-internal',
          '   Hosts: ratings.internal.example',
          `   Port: http ${VM_PORT}/HTTP targets VM port ${VM_PORT}`,
          'DestinationRule: ratings-internal for "ratings.internal.example"',
          '   Traffic Policy TLS Mode: MESH_MUTUAL',
          '--------------------',
          'Effective PeerAuthentication:',
          '   Workload mTLS mode: PERMISSIVE',
        ].join('\n'),
      );
      // By its proxy ID, the same description.
      expect((await meshctl('x', 'describe', 'pod', vmId())).stdout).toBe(described.stdout);
      expect((await meshctl('x', 'authz', 'check', vmId())).stdout).toContain('ratings-deny-admin.vm');
    });

    test('x authz explain at the VM, and from the VM: the deciding policy, the identity the VM sends; curl agrees', async () => {
      const atVm = await meshctl('x', 'authz', 'explain', `we/${ENTRY}.vm`, '--from', 'sleep-foo.foo', '--path', '/admin', '-o', 'json');
      expect(atVm.stderr).toBe('');
      const explained = JSON.parse(atVm.stdout) as { request: { source: unknown; port: number; address: string }; answer: { status?: number; by: string } };
      expect(explained.request).toMatchObject({ source: { kind: 'mtls', principal: 'spiffe://cluster.local/ns/foo/sa/sleep' }, port: VM_PORT, address: VM_IP });
      expect(explained.answer).toMatchObject({ status: 403, by: expect.stringContaining('ratings-deny-admin') });
      expect((await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/admin`])).code).toBe('403');
      expect((await curl(['-x', mesh.proxyOf('foo'), `http://ratings.vm:${VM_PORT}/ip`])).code).toBe('200');

      const fromVm = await meshctl('x', 'authz', 'explain', 'httpbin-foo.foo', '--from', vmId(), '--path', '/ip', '-o', 'json');
      expect(fromVm.stderr).toBe('');
      expect((JSON.parse(fromVm.stdout) as { request: { source: unknown } }).request.source).toEqual({
        kind: 'mtls',
        principal: 'spiffe://cluster.local/ns/vm/sa/ratings',
      });
      await mesh.remove('deny-admin.yaml');
    });
  });

  test('the VM stops: its entry is removed after the grace period', async () => {
    vm?.kill('SIGTERM');
    await new Promise((resolve) => vm?.once('exit', resolve));
    vm = undefined;
    await waitFor(async () => !(await entryExists()), { timeoutMs: 15_000, description: 'the WorkloadEntry removed' });
  });
});
