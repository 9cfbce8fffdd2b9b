import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, ApiextensionsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubectl as runKubectl } from '../../testing/kubectl.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { waitFor } from '../../testing/wait-for.js';
import { freeDaemonPorts, startChartDaemon, type ChartDaemon, type DaemonPorts } from './testing/chart-daemon.js';

// The daemon run the way the meshd chart says: installed with the real helm into the API server
// double, its Deployment's container started by the local kubelet (command, args and env from the
// rendered pod template; field references resolved; the projected token written), the API server
// reached through KUBECONFIG as an in-cluster client would reach its service. Each listener is moved
// to a free loopback port (a real pod has an address of its own). The daemon becomes ready,
// patches its webhooks' caBundle, publishes the root certificate, and injects and validates.

let kube: ApiServerDouble;
let workDir: string;
let daemon: ChartDaemon | undefined;
let ports: DaemonPorts;

const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(workDir, 'kubeconfig'), home: workDir }, args);

beforeAll(async () => {
  ports = await freeDaemonPorts();
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    serviceResolver: (namespace, name, port) =>
      namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: ports.https } : undefined,
  });
  workDir = mkdtempSync(join(tmpdir(), 'meshd-deployment-'));
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
  const kubeConfig = kube.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name } } });
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
  const installed = await helm(['install', 'meshd', join(CHARTS_DIR, 'meshd'), '--namespace', 'mesh-system', '--set', 'pilot.autoscaleEnabled=false'], {
    workDir,
    kubeconfig: join(workDir, 'kubeconfig'),
  });
  expect(installed.stderr).toBe('');

  daemon = await startChartDaemon({ kube, workDir, podName: 'meshd-6d5f7c9b8-x2x4q', ports });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the daemon started from the meshd chart’s Deployment', () => {
  test('it patches its webhooks’ caBundle, switches validation to fail-closed and publishes the root certificate', async () => {
    const admission = kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
    await waitFor(
      async () =>
        ((await admission.readMutatingWebhookConfiguration({ name: 'mesh-sidecar-injector' })).webhooks ?? []).every(
          (w) => (w.clientConfig.caBundle ?? '') !== '',
        ),
      { timeoutMs: 20_000, description: 'the injection webhooks patched' },
    );
    await waitFor(
      async () =>
        ((await admission.readValidatingWebhookConfiguration({ name: 'mesh-validator-mesh-system' })).webhooks ?? []).every((w) => w.failurePolicy === 'Fail'),
      { timeoutMs: 20_000, description: 'validation fail-closed' },
    );
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    await waitFor(async () => (await core.readNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'foo' }).catch(() => undefined)) !== undefined, {
      timeoutMs: 20_000,
      description: 'the root certificate in foo',
    });
  });

  test('kubectl apply of a pod in an injected namespace stores it injected with the chart’s templates; an invalid policy is refused', async () => {
    expect((await kubectl('label', 'namespace', 'foo', 'mesh-injection=enabled')).code).toBe(0);
    const podFile = join(workDir, 'pod.yaml');
    writeFileSync(
      podFile,
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: foo\n  labels: {app: app}\nspec:\n  containers:\n  - name: app\n    image: app\n',
    );
    const applied = await kubectl('apply', '-f', podFile);
    expect(applied.stderr).toBe('');
    const stored = JSON.parse((await kubectl('get', 'pod', 'app', '-n', 'foo', '-o', 'json')).stdout) as {
      spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] };
    };
    expect(stored.spec.containers.map((c) => c.name)).toEqual(['app', 'mesh-proxy']);
    const proxy = stored.spec.containers[1];
    expect(proxy?.env?.find((e) => e.name === 'CA_ADDR')?.value).toBe('meshd.mesh-system.svc:15012');

    const policyFile = join(workDir, 'bad-policy.yaml');
    writeFileSync(
      policyFile,
      'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: bad, namespace: foo}\nspec:\n  action: ALLOW\n  rules: [{to: [{operation: {methods: [""]}}]}]\n',
    );
    const refused = await kubectl('apply', '-f', policyFile);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('denied the request: configuration is invalid: spec.rules[0].to[0].operation.methods[0]');
  });

  test('helm upgrade with another mesh config reaches the running daemon without a restart', async () => {
    const pid = daemon?.process.pid;
    const upgraded = await helm(
      ['upgrade', 'meshd', join(CHARTS_DIR, 'meshd'), '--namespace', 'mesh-system', '--reuse-values', '--set', 'meshConfig.defaultConfig.concurrency=3'],
      { workDir, kubeconfig: join(workDir, 'kubeconfig') },
    );
    expect(upgraded.stderr).toBe('');
    await waitFor(
      async () =>
        ((await (await fetch(`http://127.0.0.1:${ports.http}/debug/mesh`)).json()) as { defaultConfig?: { concurrency?: number } }).defaultConfig
          ?.concurrency === 3,
      {
        timeoutMs: 20_000,
        description: 'the new mesh config in effect',
      },
    );
    expect(daemon?.process.pid).toBe(pid);
    expect(daemon?.process.exitCode).toBeNull();
  });
});
