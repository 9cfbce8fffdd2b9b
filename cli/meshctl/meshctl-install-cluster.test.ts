import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api } from '@kubernetes/client-node';
import { kubectl as runKubectl } from '../../testing/kubectl.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { collect, startBin } from '../../testing/run-bin.js';
import { TOOLS_BIN, toolsFirstOnPath } from '../../testing/tools.js';
import { waitFor } from '../../testing/wait-for.js';
import { freeDaemonPorts, startChartDaemon, type ChartDaemon, type DaemonPorts } from '../../e2e/charts/testing/chart-daemon.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl install, verify-install and x uninstall against the API server double, with the real
// helm rendering and the real kubectl; meshctl runs in process, and once as the built program. The test plays the Deployment controller and the kubelet:
// it starts the daemon from the Deployment meshctl applied and marks Deployments ready.
let kube: ApiServerDouble;
let dir: string;
let ports: DaemonPorts;
let daemon: ChartDaemon | undefined;
let env: Record<string, string>;
let restorePath: () => void;

const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], env);
const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);
const apps = () => kube.kubeConfig().makeApiClient(AppsV1Api);
const deploymentNames = async (): Promise<string[]> =>
  (await apps().listNamespacedDeployment({ namespace: 'mesh-system' })).items.map((d) => d.metadata?.name ?? '').sort();

/** The Deployment controller's part: a Deployment that exists is marked ready (its replicas running). */
async function markReady(name: string): Promise<void> {
  await waitFor(async () => (await deploymentNames()).includes(name), { timeoutMs: 60_000, description: `Deployment ${name} applied` });
  const current = await apps().readNamespacedDeployment({ name, namespace: 'mesh-system' });
  const replicas = current.spec?.replicas ?? 1;
  await apps().replaceNamespacedDeploymentStatus({
    name,
    namespace: 'mesh-system',
    body: { ...current, status: { replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas } },
  });
}

/** Runs `meshctl install …` while playing the controllers for the Deployments it should create. */
async function install(
  args: readonly string[],
  deployments: readonly string[],
  onDaemon?: () => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const done = meshctl('install', '-y', '--readiness-timeout', '60s', ...args);
  for (const name of deployments) {
    if (name === 'meshd' && onDaemon) await onDaemon();
    await markReady(name);
  }
  return done;
}

beforeAll(async () => {
  restorePath = await toolsFirstOnPath();
  ports = await freeDaemonPorts();
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    serviceResolver: (namespace, name, port) =>
      namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: ports.https } : undefined,
  });
  dir = mkdtempSync(join(tmpdir(), 'meshctl-install-cluster-'));
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  env = { HOME: '/nonexistent', PATH: `${TOOLS_BIN}:${process.env['PATH'] ?? ''}` };
  await kubectl('create', 'namespace', 'mesh-system');
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await kube?.close();
  restorePath();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl install and verify-install', () => {
  test('install -y applies the components in order, waits for them, and records the installation', async () => {
    const result = await install([], ['meshd', 'mesh-ingressgateway'], async () => {
      await waitFor(async () => (await deploymentNames()).includes('meshd'), { timeoutMs: 60_000, description: 'the meshd Deployment' });
      daemon = await startChartDaemon({ kube, workDir: dir, podName: 'meshd-7f9c-a1', ports });
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('✔ Mesh core installed\n✔ Meshd installed\n✔ Ingress gateways installed\n✔ Installation complete\n');
    expect(result.code).toBe(0);
    const recorded = JSON.parse((await kubectl('get', 'meshoperators', 'installed-state', '-n', 'mesh-system', '-o', 'json')).stdout) as {
      spec: { profile: string };
    };
    expect(recorded.spec.profile).toBe('default');
  }, 150_000);

  test('verify-install checks every object of the recorded installation', async () => {
    const result = await meshctl('verify-install');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('✔ Deployment: meshd.mesh-system checked successfully\n');
    expect(result.stdout).toContain('Checked 10 custom resource definitions\nChecked 2 mesh Deployments\n✔ Mesh is installed and verified successfully\n');
  });

  test('upgrade shows what changes over the installed configuration, refuses a downgrade, applies, and with --verify verifies', async () => {
    const recorded = JSON.parse((await kubectl('get', 'meshoperators', 'installed-state', '-n', 'mesh-system', '-o', 'json')).stdout) as {
      metadata: { annotations: Record<string, string> };
    };
    const version = recorded.metadata.annotations['install.mesh.io/version'] ?? '';
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect((await kubectl('annotate', 'meshoperators', 'installed-state', '-n', 'mesh-system', '--overwrite', 'install.mesh.io/version=99.0.0')).code).toBe(0);
    const refused = await meshctl('upgrade', '-y');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is a downgrade: use meshctl install for it, or --force');
    expect((await kubectl('annotate', 'meshoperators', 'installed-state', '-n', 'mesh-system', '--overwrite', `install.mesh.io/version=${version}`)).code).toBe(
      0,
    );
    const upgraded = await meshctl('upgrade', '-y', '--verify', '--set', 'values.pilot.env.PILOT_DEBOUNCE_AFTER=200ms');
    expect(upgraded.stderr).toBe('');
    expect(upgraded.stdout).toContain('+      env:\n+        PILOT_DEBOUNCE_AFTER: 200ms\n');
    // --verify runs verify-install after the upgrade, as the reference does.
    expect(upgraded.stdout).toContain('✔ Installation complete\n');
    expect(upgraded.stdout).toContain('✔ Deployment: meshd.mesh-system checked successfully\n');
    expect(upgraded.stdout).toMatch(/✔ Installation complete\n[^]*✔ Mesh is installed and verified successfully\n$/);
    const deployment = await apps().readNamespacedDeployment({ name: 'meshd', namespace: 'mesh-system' });
    expect(deployment.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'PILOT_DEBOUNCE_AFTER')?.value).toBe('200ms');
    expect((await meshctl('upgrade', '-y')).stdout).toContain('No changes to the installed configuration.\n');
  });

  test('the daemon started from the applied Deployment serves: a pod applied with kubectl is injected', async () => {
    expect((await kubectl('create', 'namespace', 'apps')).code).toBe(0);
    expect((await kubectl('label', 'namespace', 'apps', 'mesh-injection=enabled')).code).toBe(0);
    writeFileSync(
      join(dir, 'pod.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: apps, labels: {app: app}}\nspec:\n  containers: [{name: app, image: app}]\n',
    );
    await waitFor(async () => (await kubectl('apply', '-f', join(dir, 'pod.yaml'))).code === 0, {
      timeoutMs: 20_000,
      description: 'the injection webhook serving',
    });
    const pod = JSON.parse((await kubectl('get', 'pod', 'app', '-n', 'apps', '-o', 'json')).stdout) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['app', 'mesh-proxy']);
  });

  test('a second install without the gateway prunes it; verify-install fails on a missing object (exit 1)', async () => {
    const result = await install(['--set', 'components.ingressGateways[0].enabled=false'], ['meshd']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  Removed Deployment:mesh-system:mesh-ingressgateway.\n');
    expect(await deploymentNames()).toEqual(['meshd']);
    const withGateway = join(dir, 'with-gateway.yaml');
    writeFileSync(withGateway, 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  profile: default\n');
    const failed = await meshctl('verify-install', '-f', withGateway);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('✘ Deployment: mesh-ingressgateway.mesh-system not found\n');
  }, 150_000);
});

describe('meshctl x revision tag', () => {
  test('set, refusals, a namespace labelled with the tag injected by its revision, list, generate and remove', async () => {
    const set = await meshctl('x', 'revision', 'tag', 'set', 'prod', '--revision', 'default');
    expect(set.stderr).toBe('');
    expect(set.stdout).toContain('Revision tag "prod" created, referencing control plane revision "default"');
    expect((await meshctl('x', 'revision', 'tag', 'set', 'prod', '--revision', 'default')).stderr).toContain(
      'revision tag "prod" already exists, and --overwrite is false',
    );
    expect((await meshctl('x', 'revision', 'tag', 'set', 'default', '--revision', 'default')).stderr).toContain(
      'cannot create revision tag "default": found existing control plane revision with same name',
    );
    expect((await meshctl('x', 'revision', 'tag', 'set', 'prod', '--revision', 'nope', '--overwrite')).stderr).toContain(
      'cannot modify tag: cannot find MutatingWebhookConfiguration with revision "nope"',
    );

    expect((await kubectl('create', 'namespace', 'tagged')).code).toBe(0);
    expect((await kubectl('label', 'namespace', 'tagged', 'mesh.io/rev=prod')).code).toBe(0);
    writeFileSync(
      join(dir, 'tagged-pod.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: app, namespace: tagged, labels: {app: app}}\nspec:\n  containers: [{name: app, image: app}]\n',
    );
    expect((await kubectl('apply', '-f', join(dir, 'tagged-pod.yaml'))).stderr).toBe('');
    const pod = JSON.parse((await kubectl('get', 'pod', 'app', '-n', 'tagged', '-o', 'json')).stdout) as {
      metadata: { annotations: Record<string, string> };
      spec: { containers: { name: string }[] };
    };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['app', 'mesh-proxy']);
    expect(JSON.parse(pod.metadata.annotations['sidecar.mesh.io/status'] ?? '{}')).toMatchObject({ revision: 'default' });

    expect((await meshctl('x', 'revision', 'tag', 'list')).stdout).toBe('TAG  REVISION NAMESPACES\nprod default  tagged\n');
    expect((await meshctl('x', 'revision', 'list')).stdout).toBe(
      'REVISION TAG  MESH-OPERATOR-CR            PROFILE REQD-COMPONENTS\ndefault  prod mesh-system/installed-state default base\n                                                  pilot\n',
    );
    // The group's -o, as seed 3 gives it, and the command's own.
    const groupJson = await meshctl('x', 'revision', '-o', 'json', 'list');
    expect(JSON.parse(groupJson.stdout)).toEqual(JSON.parse((await meshctl('x', 'revision', 'list', '-o', 'json')).stdout));
    expect((await meshctl('x', 'revision', '-o', 'json', 'list', '-o', 'table')).stdout).toMatch(/^REVISION /);
    expect((await meshctl('x', 'revision', 'tag', 'generate', 'stable', '--revision', 'default')).stdout).toContain('name: mesh-revision-tag-stable');

    // A hand-made injector selecting namespaces of revision "beta": a tag of that name would inject twice.
    writeFileSync(
      join(dir, 'legacy-injector.yaml'),
      [
        'apiVersion: admissionregistration.k8s.io/v1',
        'kind: MutatingWebhookConfiguration',
        'metadata: {name: legacy-injector}',
        'webhooks:',
        '  - name: legacy.sidecar-injector.mesh.io',
        '    clientConfig: {url: "https://127.0.0.1:1/inject"}',
        '    rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]',
        '    namespaceSelector: {matchExpressions: [{key: mesh.io/rev, operator: In, values: [beta]}]}',
        '    sideEffects: None',
        '    admissionReviewVersions: [v1]',
        '    failurePolicy: Ignore',
        '',
      ].join('\n'),
    );
    expect((await kubectl('apply', '-f', join(dir, 'legacy-injector.yaml'))).code).toBe(0);
    const overlapping = await meshctl('x', 'revision', 'tag', 'set', 'beta', '--revision', 'default');
    expect(overlapping.code).toBe(1);
    expect(overlapping.stderr).toContain('creating tag would conflict, pass --skip-confirmation to proceed:\n');
    expect(overlapping.stderr).toContain(
      'Error [MSH0139] (MutatingWebhookConfiguration mesh-revision-tag-beta) Webhook overlaps with others: [legacy-injector/legacy.sidecar-injector.mesh.io]. This may cause injection to occur twice.',
    );
    expect((await kubectl('get', 'mutatingwebhookconfiguration', 'mesh-revision-tag-beta')).code).not.toBe(0);
    // generate writes the YAML either way, warning of the conflict on stderr unless -y, as the reference does.
    const generated = await meshctl('x', 'revision', 'tag', 'generate', 'beta', '--revision', 'default');
    expect(generated.code).toBe(0);
    expect(generated.stdout).toContain('name: mesh-revision-tag-beta');
    expect(generated.stderr).toContain('Error [MSH0139] (MutatingWebhookConfiguration mesh-revision-tag-beta) Webhook overlaps with others');
    const confirmed = await meshctl('x', 'revision', 'tag', 'generate', 'beta', '--revision', 'default', '-y');
    expect(confirmed.stderr).toBe('');
    expect(confirmed.stdout).toBe(generated.stdout);
    expect((await meshctl('x', 'revision', 'tag', 'set', 'beta', '--revision', 'default', '-y')).code).toBe(0);
    expect((await meshctl('x', 'revision', 'tag', 'remove', 'beta', '-y')).code).toBe(0);
    expect((await kubectl('delete', '-f', join(dir, 'legacy-injector.yaml'))).code).toBe(0);
    expect((await meshctl('x', 'revision', 'tag', 'remove', 'prod')).stderr).toContain('namespaces still use it: tagged');
    expect((await meshctl('x', 'revision', 'tag', 'remove', 'prod', '-y')).stdout).toBe('Revision tag prod removed\n');
    expect((await meshctl('x', 'revision', 'tag', 'list')).stdout).toBe('No mesh revision tag MutatingWebhookConfigurations to list\n');
    // About twenty meshctl (in process) and kubectl runs: 1–3 s alone, several times that on a busy machine.
  }, 60_000);
});

describe('meshctl x uninstall', () => {
  test('refuses without a target, as the reference does', async () => {
    const result = await meshctl('x', 'uninstall', '-y');
    expect(result.code).toBe(64);
    expect(result.stderr).toBe('Error: at least one of the --revision (or --set revision=<revision>), --filename or --purge flags must be set\n');
  });

  test('-f naming revision canary removes only the canary; --purge leaves nothing of ours', async () => {
    const canary = await install(
      ['-r', 'canary', '--set', 'components.base.enabled=false', '--set', 'components.ingressGateways[0].enabled=false'],
      ['meshd-canary'],
    );
    expect(canary.code).toBe(0);
    expect(await deploymentNames()).toEqual(['meshd', 'meshd-canary']);
    // The file names the revision to remove (before, -f was never read and the default revision went).
    const canaryFile = join(dir, 'canary.yaml');
    writeFileSync(canaryFile, 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  revision: canary\n');
    // A file with an invalid field is refused; --force warns and goes on; -v lists what would go.
    const invalidFile = join(dir, 'canary-invalid.yaml');
    writeFileSync(invalidFile, 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  revision: canary\n  bogus: 1\n');
    expect((await meshctl('x', 'uninstall', '-f', invalidFile, '-y', '--dry-run')).code).toBe(64);
    const verbose = await meshctl('x', 'uninstall', '-f', invalidFile, '--force', '-v', '-y', '--dry-run');
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toBe('spec invalid; continuing because of --force: spec: Unrecognized key: "bogus"\n');
    expect(verbose.stdout).toMatch(/^The following resources will be pruned from the cluster: .*Deployment: meshd-canary\. /);
    expect(verbose.stdout).not.toMatch(/pruned from the cluster: [^\n]*\bmeshd\b(?!-)/);
    expect(await deploymentNames()).toEqual(['meshd', 'meshd-canary']);
    const removed = await meshctl('x', 'uninstall', '-f', canaryFile, '-y');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('  Removed Deployment:mesh-system:meshd-canary.\n');
    expect(removed.stdout).not.toContain('There are still');
    expect(await deploymentNames()).toEqual(['meshd']);

    await daemon?.stop();
    const purged = await meshctl('x', 'uninstall', '--purge', '-y');
    expect(purged.code).toBe(0);
    expect(purged.stdout).toMatch(/✔ Uninstall complete\n$/);
    expect(purged.stdout).toMatch(
      /^There are still 2 proxies pointing to the control plane revision default\napp\.apps\napp\.tagged\nIf you proceed with the uninstall, these proxies will become detached from any control plane and will not function correctly\.\n/,
    );
    const left = (
      await kubectl(
        'get',
        'deployments,services,configmaps,serviceaccounts,mutatingwebhookconfigurations,validatingwebhookconfigurations,clusterroles,clusterrolebindings,customresourcedefinitions',
        '-A',
        '-l',
        'app.kubernetes.io/part-of=mesh',
        '-o',
        'name',
      )
    ).stdout;
    expect(left).toBe('');
    const crds = (await kubectl('get', 'customresourcedefinitions', '-o', 'name')).stdout;
    expect(crds).not.toMatch(/mesh\.io/);
  }, 150_000);
});

describe('the API server going away during install', () => {
  test('install stops naming what it could not apply or wait for; run again, it completes the installation', async () => {
    // Server-side apply is a PATCH: refused for Deployments, the daemon's cannot be applied.
    kube.faults.denyAccess([{ verb: 'patch', group: 'apps', resource: 'deployments' }]);
    const refused = await install([], []);
    kube.faults.denyAccess([]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('✔ Mesh core installed\n');
    expect(refused.stderr).toContain('✘ Meshd encountered an error: failed to apply Deployment:mesh-system:meshd: deployments.apps "meshd" is forbidden');

    // The server goes down once the daemon's Deployment is applied: while install applies the rest of
    // the component, or waits for it to be ready. The built program, as users run it.
    const child = startBin('meshctl', ['-c', join(dir, 'kubeconfig'), 'install', '-y', '--readiness-timeout', '60s'], env);
    const done = collect(child, 120_000);
    await waitFor(async () => (await deploymentNames()).includes('meshd'), { timeoutMs: 60_000, description: 'the meshd Deployment applied' });
    kube.faults.refuseConnections(true);
    const cut = await done;
    kube.faults.refuseConnections(false);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(
      /✘ Meshd encountered an error: failed to (apply [A-Za-z]+:[a-z-]*:[a-z-]+|wait for resource): .*(ECONNRESET|socket hang up|ECONNREFUSED)/,
    );

    const again = await install([], ['meshd', 'mesh-ingressgateway']);
    expect(again.stderr).toBe('');
    expect(again.stdout).toBe('✔ Mesh core installed\n✔ Meshd installed\n✔ Ingress gateways installed\n✔ Installation complete\n');
    const verified = await meshctl('verify-install');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain('✔ Mesh is installed and verified successfully\n');
  }, 200_000);
});
