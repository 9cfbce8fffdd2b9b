import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { toolPath } from '../testing/tools.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';

const run = promisify(execFile);
const here = fileURLToPath(new URL('.', import.meta.url));
let kubectlPath = '';

describe('API server double: the real kubectl', () => {
  let server: ApiServerDouble;
  let work: string;
  let kubeconfig: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run(kubectlPath, ['--kubeconfig', kubeconfig, ...args], {
        env: { HOME: work },
        timeout: 20_000,
      });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
    }
  };
  const peerAuthentications = () => server.objects('security.mesh.io/v1beta1', 'PeerAuthentication', 'mesh-system');

  beforeAll(async () => {
    kubectlPath = await toolPath('kubectl');
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    work = await mkdtemp(join(tmpdir(), 'mesh-kubectl-'));
    kubeconfig = join(work, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('apply a CRD, then a custom resource of it; get, change, delete', async () => {
    const crdFile = join(here, 'testdata', 'peerauthentication-crd.yaml');
    const crFile = join(here, 'testdata', 'peerauthentication.yaml');

    expect(await kubectl('apply', '-f', crdFile)).toContain('customresourcedefinition.apiextensions.k8s.io/peerauthentications.security.mesh.io created');
    expect(server.objects('apiextensions.k8s.io/v1', 'CustomResourceDefinition').map((o) => o.metadata?.name)).toEqual([
      'peerauthentications.security.mesh.io',
    ]);
    expect(await kubectl('wait', '--for=condition=Established', 'crd/peerauthentications.security.mesh.io', '--timeout=5s')).toContain('condition met');

    const created = await kubectl('apply', '-f', crFile);
    expect(created).toContain('namespace/mesh-system created');
    expect(created).toContain('peerauthentication.security.mesh.io/default created');
    expect(peerAuthentications().map((o) => o['spec'])).toEqual([{ mtls: { mode: 'STRICT' } }]);

    const table = (await kubectl('get', 'pa', '-n', 'mesh-system')).trim().split('\n');
    expect(table[0]?.split(/\s+/)).toEqual(['NAME', 'MODE', 'AGE']);
    expect(table[1]?.split(/\s+/).slice(0, 2)).toEqual(['default', 'STRICT']);

    const asYaml = parseYaml(await kubectl('get', 'peerauthentication', 'default', '-n', 'mesh-system', '-o', 'yaml')) as Record<string, any>;
    expect(asYaml['apiVersion']).toBe('security.mesh.io/v1beta1');
    expect(asYaml['spec']).toEqual({ mtls: { mode: 'STRICT' } });
    expect(asYaml['metadata']['annotations']['kubectl.kubernetes.io/last-applied-configuration']).toContain('"STRICT"');
    expect(asYaml['metadata']['uid']).toBe(peerAuthentications()[0]?.metadata?.uid);

    const changedFile = join(work, 'changed.yaml');
    await writeFile(changedFile, (await readFile(crFile, 'utf8')).replace('STRICT', 'PERMISSIVE'));
    const changed = await kubectl('apply', '-f', changedFile);
    expect(changed).toContain('namespace/mesh-system unchanged');
    expect(changed).toContain('peerauthentication.security.mesh.io/default configured');
    expect(peerAuthentications().map((o) => [o['spec'], o.metadata?.generation])).toEqual([[{ mtls: { mode: 'PERMISSIVE' } }, 2]]);

    expect(await kubectl('delete', 'peerauthentication', 'default', '-n', 'mesh-system')).toContain('deleted');
    expect(peerAuthentications()).toEqual([]);
  });

  test('server-side apply and a built-in kind with strategic merge', async () => {
    const file = join(work, 'configmap.yaml');
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh\n  namespace: mesh-system\ndata:\n  mesh: "a: 1"\n  extra: x\n');
    expect(await kubectl('apply', '--server-side', '-f', file)).toContain('configmap/mesh serverside-applied');
    const managers = server.objects('v1', 'ConfigMap', 'mesh-system')[0]?.metadata?.['managedFields'] as { manager: string; operation: string }[];
    expect(managers.map((m) => `${m.manager}/${m.operation}`)).toEqual(['kubectl/Apply']);

    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: client\n  namespace: mesh-system\ndata:\n  a: "1"\n  b: "2"\n');
    await kubectl('apply', '-f', file);
    await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: client\n  namespace: mesh-system\ndata:\n  a: "1"\n  c: "3"\n');
    expect(await kubectl('apply', '-f', file)).toContain('configmap/client configured');
    expect(server.objects('v1', 'ConfigMap', 'mesh-system').find((o) => o.metadata?.name === 'client')?.['data']).toEqual({ a: '1', c: '3' });

    expect(await kubectl('delete', 'namespace', 'mesh-system')).toContain('namespace "mesh-system" deleted');
    expect(server.objects('v1', 'ConfigMap', 'mesh-system')).toEqual([]);
  });

  test('get pods prints READY, STATUS, RESTARTS and AGE, and -o wide the IP and the node, as a real server', async () => {
    await kubectl('create', 'namespace', 'pods');
    const file = join(work, 'pods.yaml');
    const pod = (name: string, initContainers = '') =>
      `apiVersion: v1\nkind: Pod\nmetadata: { name: ${name}, namespace: pods }\nspec:\n  nodeName: node-a\n${initContainers}  containers: [{ name: app, image: app }, { name: mesh-proxy, image: proxy }]\n`;
    await writeFile(
      file,
      `${pod('injected')}---\n${pod('native-sidecar', '  initContainers: [{ name: mesh-proxy-init, image: proxy, restartPolicy: Always }]\n')}---\n${pod('crashing')}`,
    );
    await kubectl('apply', '-f', file);
    const running = (ready: boolean) => ({ ready, started: true, restartCount: 0, state: { running: { startedAt: new Date().toISOString() } } });
    const status = (name: string, value: object) =>
      kubectl('patch', 'pod', name, '-n', 'pods', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: value }));
    await status('injected', {
      phase: 'Running',
      podIP: '10.1.0.7',
      containerStatuses: [
        { name: 'app', ...running(true) },
        { name: 'mesh-proxy', ...running(true) },
      ],
    });
    await status('native-sidecar', {
      phase: 'Running',
      podIP: '10.1.0.8',
      initContainerStatuses: [{ name: 'mesh-proxy-init', ...running(true) }],
      containerStatuses: [{ name: 'app', ...running(false) }],
    });
    const lastCrash = new Date(Date.now() - 5 * 60_000).toISOString();
    await status('crashing', {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          restartCount: 3,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: 1, finishedAt: lastCrash } },
        },
        { name: 'mesh-proxy', ...running(true) },
      ],
    });
    const rows = (await kubectl('get', 'pods', '-n', 'pods'))
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(rows.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['crashing', '1/2', 'CrashLoopBackOff', '3 (5m ago)'],
      ['injected', '2/2', 'Running', '0'],
      ['native-sidecar', '1/3', 'Running', '0'],
    ]);
    const wide = (await kubectl('get', 'pods', '-n', 'pods', '-o', 'wide'))
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(wide[0]).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(wide[2]?.slice(5)).toEqual(['10.1.0.7', 'node-a', '<none>', '<none>']);
  });

  test('typed create commands, which send protobuf bodies', async () => {
    expect(await kubectl('create', 'namespace', 'plugged')).toContain('namespace/plugged created');
    expect(await kubectl('create', 'secret', 'generic', 'cacerts', '-n', 'plugged', '--from-literal=root-cert.pem=PEM')).toContain('secret/cacerts created');
    expect(server.objects('v1', 'Secret', 'plugged')[0]).toMatchObject({ type: 'Opaque', data: { 'root-cert.pem': Buffer.from('PEM').toString('base64') } });
    expect(await kubectl('create', 'configmap', 'mesh', '-n', 'plugged', '--from-literal=mesh=x')).toContain('configmap/mesh created');
    expect(await kubectl('create', 'serviceaccount', 'workload', '-n', 'plugged')).toContain('serviceaccount/workload created');
    const token = (await kubectl('create', 'token', 'workload', '-n', 'plugged', '--audience=mesh-ca')).trim();
    const review = await fetch(`${server.url}/apis/authentication.k8s.io/v1/tokenreviews`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: ['mesh-ca'] } }),
    });
    expect(((await review.json()) as { status: { user: { username: string } } }).status.user.username).toBe('system:serviceaccount:plugged:workload');
    expect((await kubectl('auth', 'can-i', 'create', 'pods')).trim()).toBe('yes');
  });
});
