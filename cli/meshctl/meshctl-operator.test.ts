import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CustomObjectsApi, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { prepareContainer } from '../../e2e/local-mesh/kubelet.js';
import { expectGoldenText } from '../../testing/golden.js';
import { kubectl as runKubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT, startBin } from '../../testing/run-bin.js';
import { TOOLS_BIN, toolsFirstOnPath } from '../../testing/tools.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// The install operator: `meshctl operator dump|init|remove` with the real helm, and the operator
// started from the Deployment `operator init` applied (the test plays the kubelet and the
// Deployment controller), reconciling MeshOperators applied with the real kubectl into installed,
// upgraded and removed control planes, with its metrics moving.
let kube: ApiServerDouble;
let dir: string;
let env: Record<string, string>;
let restorePath: () => void;
let operator: { process: ChildProcess; output: () => string; metricsPort: number } | undefined;

// meshctl's commands run in process; the operator runs as the built program, as its pod would.
const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], env);
const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);
const apps = () => kube.kubeConfig().makeApiClient(AppsV1Api);
const deployment = async (name: string, namespace = 'mesh-system'): Promise<V1Deployment | undefined> =>
  apps()
    .readNamespacedDeployment({ name, namespace })
    .catch(() => undefined);

interface MeshOperatorStatus {
  status?: string;
  message?: string | null;
  componentStatus?: Record<string, { status: string }>;
}
const statusOf = async (name: string): Promise<MeshOperatorStatus | undefined> => {
  const object = (await kube
    .kubeConfig()
    .makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({ group: 'install.mesh.io', version: 'v1alpha1', namespace: 'mesh-system', plural: 'meshoperators', name })
    .catch(() => undefined)) as { status?: MeshOperatorStatus } | undefined;
  return object?.status;
};

/** The Deployment controller's part: the Deployment's replicas are running. */
async function markReady(name: string): Promise<void> {
  const current = await apps().readNamespacedDeployment({ name, namespace: 'mesh-system' });
  const replicas = current.spec?.replicas ?? 1;
  await apps().replaceNamespacedDeploymentStatus({
    name,
    namespace: 'mesh-system',
    body: { ...current, status: { replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas } },
  });
}

/** One sample of the operator's /metrics, 0 when absent. */
async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${operator?.metricsPort ?? 0}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(labels === '' ? `${name} ` : `${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Starts the operator as its Deployment's pod would run: its container's command line, the metrics port and the charts' folder moved to this machine. */
async function startOperator(): Promise<void> {
  const applied = await apps().readNamespacedDeployment({ name: 'mesh-operator', namespace: 'mesh-operator' });
  const pod: V1Pod = {
    metadata: { ...applied.spec?.template.metadata, name: 'mesh-operator-5d8f-x1', namespace: 'mesh-operator' },
    spec: applied.spec?.template.spec ?? { containers: [] },
  };
  const podDir = join(dir, 'operator-pod');
  mkdirSync(podDir, { recursive: true });
  const launch = await prepareContainer(pod, 'mesh-operator', podDir, {
    kubeConfig: kube.kubeConfig(),
    issueToken: (ns, serviceAccount, audience, expirationSeconds) =>
      kube.issueToken({ namespace: ns, serviceAccount, audiences: [audience], expirationSeconds }),
  });
  if (!launch) throw new Error('the operator chart has no mesh-operator container');
  expect(launch.command).toEqual(['meshctl']);
  const metricsPort = await freePort();
  const args = launch.args.map((arg) =>
    arg.startsWith('--manifests=')
      ? `--manifests=${join(PROJECT_ROOT, 'deploy')}`
      : arg.startsWith('--monitoringAddr=')
        ? `--monitoringAddr=127.0.0.1:${metricsPort}`
        : arg,
  );
  writeFileSync(join(podDir, 'kubeconfig'), kube.kubeconfigYaml());
  const child = startBin('meshctl', args, { ...launch.env, ...env, KUBECONFIG: join(podDir, 'kubeconfig') }, podDir);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  operator = { process: child, output: () => output, metricsPort };
  await waitFor(async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`).catch(() => undefined))?.ok === true, {
    timeoutMs: 30_000,
    description: `the operator's metrics (${output})`,
  });
}

beforeAll(async () => {
  restorePath = await toolsFirstOnPath();
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  dir = mkdtempSync(join(tmpdir(), 'meshctl-operator-'));
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  env = { HOME: '/nonexistent', PATH: `${TOOLS_BIN}:${process.env['PATH'] ?? ''}` };
}, 60_000);

afterAll(async () => {
  if (operator && operator.process.exitCode === null) {
    const exited = new Promise((resolve) => operator?.process.once('exit', resolve));
    operator.process.kill('SIGTERM');
    await exited;
  }
  await kube?.close();
  restorePath();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl operator dump', () => {
  test('prints the operator chart: its CRD, namespace, RBAC, Deployment running `meshctl operator server` and metrics Service', async () => {
    const result = await meshctl('operator', 'dump');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectGoldenText(join(PROJECT_ROOT, 'cli', 'testdata', 'operator', 'dump-default.golden.yaml'), result.stdout);
  });

  test('--hub, --tag, --imagePullSecrets, --operatorNamespace and --revision reach the objects', async () => {
    const result = await meshctl(
      'operator',
      'dump',
      '--hub',
      'registry.example/mesh',
      '--tag',
      '1.4.2',
      '--imagePullSecrets',
      'pull-a,pull-b',
      '--operatorNamespace',
      'ops',
      '-r',
      'canary',
    );
    expect(result.code).toBe(0);
    const objects = parseAllDocuments(result.stdout).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; spec?: V1Deployment['spec'] },
    );
    const operatorDeployment = objects.find((o) => o.kind === 'Deployment');
    expect(operatorDeployment?.metadata).toMatchObject({ name: 'mesh-operator-canary', namespace: 'ops' });
    const podSpec = operatorDeployment?.spec?.template.spec;
    expect(podSpec?.containers[0]?.image).toBe('registry.example/mesh/operator:1.4.2');
    expect(podSpec?.imagePullSecrets).toEqual([{ name: 'pull-a' }, { name: 'pull-b' }]);
    expect(podSpec?.containers[0]?.args).toContain('--revision=canary');
    expect(objects.find((o) => o.kind === 'Namespace')?.metadata.name).toBe('ops');
  });

  test('a bad flag value is a usage error naming the flag, exit 64', async () => {
    const result = await meshctl('operator', 'dump', '--operatorNamespace', 'Not_A_Namespace');
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--operatorNamespace');
    expect(result.stdout).toBe('');
  });
});

describe('the install operator against the API server double', () => {
  test('operator init installs the operator and the MeshOperator given with -f', async () => {
    writeFileSync(
      join(dir, 'control-plane.yaml'),
      'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nmetadata:\n  name: control-plane\n  namespace: mesh-system\nspec:\n  profile: minimal\n',
    );
    const result = await meshctl('operator', 'init', '-f', join(dir, 'control-plane.yaml'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'Installing operator controller in namespace: mesh-operator using image: docker.io/meshproject/operator:latest',
        'Operator controller will watch namespaces: mesh-system',
        '✔ Mesh operator installed',
        '✔ MeshOperator mesh-system/control-plane created: the operator installs it',
        '',
      ].join('\n'),
    );
    expect(await deployment('mesh-operator', 'mesh-operator')).toBeDefined();
    // Nothing is installed until the operator runs.
    expect(await deployment('meshd')).toBeUndefined();
  }, 90_000);

  test('the operator reconciles the MeshOperator into an installation, HEALTHY once its Deployment is ready', async () => {
    await startOperator();
    await waitFor(async () => (await deployment('meshd')) !== undefined, {
      timeoutMs: 60_000,
      description: `the meshd Deployment (${operator?.output() ?? ''})`,
    });
    expect(await deployment('mesh-ingressgateway')).toBeUndefined();
    await waitFor(async () => (await statusOf('control-plane'))?.status === 'RECONCILING', { timeoutMs: 30_000, description: 'status RECONCILING' });
    await markReady('meshd');
    await waitFor(async () => (await statusOf('control-plane'))?.status === 'HEALTHY', { timeoutMs: 30_000, description: 'status HEALTHY' });
    expect(await statusOf('control-plane')).toEqual({ status: 'HEALTHY', componentStatus: { Base: { status: 'HEALTHY' }, Pilot: { status: 'HEALTHY' } } });
    const labels = (await deployment('meshd'))?.metadata?.labels ?? {};
    expect(labels['install.operator.mesh.io/owning-resource']).toBe('control-plane');
    expect(await metric('render_manifest_total', 'component="Pilot"')).toBeGreaterThanOrEqual(1);
    expect(await metric('resource_creation_total', 'kind="Deployment"')).toBe(1);
    expect(await metric('owned_resource_total', 'kind="Deployment"')).toBe(1);
    expect(await metric('owned_resource_total', 'kind="MutatingWebhookConfiguration"')).toBe(1);
  }, 120_000);

  test('a MeshOperator changed with kubectl apply upgrades the control plane', async () => {
    const updatesBefore = await metric('resource_update_total', 'kind="Deployment"');
    writeFileSync(
      join(dir, 'control-plane.yaml'),
      [
        'apiVersion: install.mesh.io/v1alpha1',
        'kind: MeshOperator',
        'metadata: {name: control-plane, namespace: mesh-system}',
        'spec:',
        '  profile: minimal',
        '  components:',
        '    ingressGateways: [{name: mesh-ingressgateway, enabled: true}]',
        '  values:',
        '    pilot: {env: {PILOT_DEBOUNCE_AFTER: 250ms}}',
        '',
      ].join('\n'),
    );
    expect((await kubectl('apply', '-f', join(dir, 'control-plane.yaml'))).code).toBe(0);
    await waitFor(async () => (await deployment('mesh-ingressgateway')) !== undefined, { timeoutMs: 60_000, description: 'the gateway Deployment' });
    await waitFor(
      async () => (await deployment('meshd'))?.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'PILOT_DEBOUNCE_AFTER')?.value === '250ms',
      { timeoutMs: 30_000, description: 'the changed daemon env' },
    );
    expect(await metric('resource_update_total', 'kind="Deployment"')).toBeGreaterThan(updatesBefore);
    expect(await metric('resource_creation_total', 'kind="Deployment"')).toBe(2);
    await markReady('mesh-ingressgateway');
    await markReady('meshd');
    await waitFor(async () => (await statusOf('control-plane'))?.componentStatus?.['IngressGateways']?.status === 'HEALTHY', {
      timeoutMs: 30_000,
      description: 'the gateway HEALTHY',
    });
    expect(await metric('owned_resource_total', 'kind="Deployment"')).toBe(2);
    expect(await metric('cache_flush_total', '')).toBeGreaterThanOrEqual(1);
  }, 120_000);

  test('an invalid MeshOperator is an ERROR status naming the problem; the installation is left as it was', async () => {
    writeFileSync(
      join(dir, 'broken.yaml'),
      'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nmetadata: {name: broken, namespace: mesh-system}\nspec:\n  profile: no-such-profile\n',
    );
    expect((await kubectl('apply', '-f', join(dir, 'broken.yaml'))).code).toBe(0);
    await waitFor(async () => (await statusOf('broken'))?.status === 'ERROR', { timeoutMs: 30_000, description: 'status ERROR' });
    expect((await statusOf('broken'))?.message).toContain('unknown profile "no-such-profile"');
    expect(await metric('cr_validation_error_total', '')).toBeGreaterThanOrEqual(1);
    expect(await deployment('meshd')).toBeDefined();
    expect((await kubectl('delete', '-f', join(dir, 'broken.yaml'))).code).toBe(0);
  }, 60_000);

  test('deleting the MeshOperator removes what it installed', async () => {
    expect((await kubectl('delete', 'meshoperator', 'control-plane', '-n', 'mesh-system')).code).toBe(0);
    await waitFor(async () => (await deployment('meshd')) === undefined && (await deployment('mesh-ingressgateway')) === undefined, {
      timeoutMs: 60_000,
      description: 'the installation removed',
    });
    await waitFor(async () => (await metric('cr_deletion_total', '')) === 1, { timeoutMs: 10_000, description: 'cr_deletion_total' });
    expect(await metric('owned_resource_total', 'kind="Deployment"')).toBe(0);
    expect(await metric('resource_deletion_total', 'kind="Deployment"')).toBe(2);
  }, 90_000);

  test('operator remove deletes the operator; a second remove is refused unless --force', async () => {
    const removed = await meshctl('operator', 'remove');
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('Removing mesh operator...\n');
    expect(removed.stdout).toContain('  Removed Deployment:mesh-operator:mesh-operator.\n');
    expect(removed.stdout).toMatch(/✔ Removal complete\n$/);
    expect(await deployment('mesh-operator', 'mesh-operator')).toBeUndefined();
    const again = await meshctl('operator', 'remove');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Operator controller is not installed in mesh-operator namespace.');
    expect((await meshctl('operator', 'remove', '--force')).code).toBe(0);
  }, 60_000);
});
