import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubectl as runKubectl } from '../../testing/kubectl.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { waitFor } from '../../testing/wait-for.js';
import { CLUSTER_TYPE, LISTENER_TYPE, loadEnvoyProtos } from '../../xds/index.js';
import { newAdsTestClient, nodeFor } from '../../xds/testing/test-support.js';
import { freeDaemonPorts, startChartDaemon, type ChartDaemon } from './testing/chart-daemon.js';

// Scale-out: replicas of the meshd chart's Deployment against one API server double. Each serves
// xDS, injection and validation (the meshd service is spread over the live replicas); one leader
// does the leader duties; the self-signed root is created once and shared; a killed leader hands
// over within the lease with nothing lost.
let kube: ApiServerDouble;
let workDir: string;
const replicas: ChartDaemon[] = [];
let nextReplica = 0;

const live = (): ChartDaemon[] => replicas.filter((r) => r.process.exitCode === null && r.process.signalCode === null);
const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(workDir, 'kubeconfig'), home: workDir }, args);
const metric = async (daemon: ChartDaemon, name: string): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${daemon.ports.monitoring}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name) && !line.startsWith('#'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
};
const leaseHolder = async (): Promise<string> =>
  (
    await kube
      .kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'meshd-leader', namespace: 'mesh-system' })
      .catch(() => undefined)
  )?.spec?.holderIdentity ?? '';
const leaderOf = async (): Promise<ChartDaemon | undefined> => {
  const holder = await leaseHolder();
  return live().find((r) => holder.startsWith(`${r.podName}_`));
};

beforeAll(async () => {
  const ports = await Promise.all([freeDaemonPorts(), freeDaemonPorts(), freeDaemonPorts()]);
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    // The meshd service spreads webhook calls over the replicas that are up.
    serviceResolver: (namespace, name, port) => {
      const up = live();
      if (namespace !== 'mesh-system' || name !== 'meshd' || port !== 443 || up.length === 0) return undefined;
      return { host: '127.0.0.1', port: (up[nextReplica++ % up.length] as ChartDaemon).ports.https };
    },
  });
  workDir = mkdtempSync(join(tmpdir(), 'meshd-replicas-'));
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
  const kubeConfig = kube.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'foo'])
    await core.createNamespace({ body: { metadata: { name, labels: name === 'foo' ? { 'mesh-injection': 'enabled' } : {} } } });
  for (const crd of buildCrdManifests()) await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd as never });
  const installed = await helm(
    [
      'install',
      'meshd',
      join(CHARTS_DIR, 'meshd'),
      '--namespace',
      'mesh-system',
      '--set',
      'pilot.autoscaleEnabled=false',
      '--set',
      'pilot.replicaCount=3',
      '--set',
      'pilot.env.PILOT_ENABLE_STATUS=true',
    ],
    { workDir, kubeconfig: join(workDir, 'kubeconfig') },
  );
  expect(installed.stderr).toBe('');
  // Two replicas at once race to create the self-signed root; the third comes later.
  replicas.push(...(await Promise.all([0, 1].map((i) => startChartDaemon({ kube, workDir, podName: `meshd-5f8d-${i}`, ports: ports[i] })))));
  replicas.push(await startChartDaemon({ kube, workDir, podName: 'meshd-5f8d-2', ports: ports[2] }));
}, 180_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('three replicas of the meshd chart', () => {
  test('one self-signed root, created once: every replica serves a certificate under it', async () => {
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    const secrets = (await core.listNamespacedSecret({ namespace: 'mesh-system' })).items.filter((s) => s.metadata?.name === 'mesh-ca-secret');
    expect(secrets).toHaveLength(1);
    await waitFor(async () => (await core.readNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'foo' }).catch(() => undefined)) !== undefined, {
      timeoutMs: 30_000,
      description: 'the root published',
    });
    const root = (await core.readNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'foo' })).data?.['root-cert.pem'] ?? '';
    for (const replica of replicas) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: replica.ports.secure, ca: root, servername: 'meshd.mesh-system.svc', ALPNProtocols: ['h2'] }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      });
    }
  });

  test('exactly one leader does the leader duties', async () => {
    await waitFor(async () => (await leaderOf()) !== undefined, { timeoutMs: 30_000, description: 'a leader' });
    const leaders = replicas.filter((r) => r.output().includes('successfully acquired lease'));
    expect(leaders.map((r) => r.podName)).toEqual([(await leaderOf())?.podName]);
  });

  test('each replica injects and validates; proxies on either replica get the same config', async () => {
    for (let i = 0; i < 6; i++) {
      const file = join(workDir, `pod-${i}.yaml`);
      writeFileSync(
        file,
        `apiVersion: v1\nkind: Pod\nmetadata: {name: app-${i}, namespace: foo, labels: {app: app}}\nspec:\n  containers: [{name: app, image: app}]\n`,
      );
      expect((await kubectl('apply', '-f', file)).stderr).toBe('');
    }
    for (const replica of replicas) expect(await metric(replica, 'sidecar_injection_success_total')).toBeGreaterThan(0);
    const bad = join(workDir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: bad, namespace: foo}\nspec: {action: BOGUS}\n');
    for (let i = 0; i < 3; i++) expect((await kubectl('apply', '-f', bad)).stderr).toContain('configuration is invalid');
    for (const replica of replicas) expect(await metric(replica, 'galley_validation_failed')).toBeGreaterThan(0);

    const protos = loadEnvoyProtos();
    const configs: string[] = [];
    for (const replica of replicas) {
      const client = newAdsTestClient(protos, replica.ports.grpc);
      try {
        const stream = client.sotw();
        const resources: string[] = [];
        for (const type of [CLUSTER_TYPE, LISTENER_TYPE]) {
          stream.send({ node: nodeFor('app-0', 'foo'), type_url: type });
          const response = await stream.next(10_000);
          resources.push(...response.resources.map((r) => `${r.type_url ?? ''}:${(r.value ?? Buffer.alloc(0)).toString('base64')}`).sort());
        }
        stream.close();
        configs.push(resources.join('\n'));
      } finally {
        client.close();
      }
    }
    expect(configs[1]).toBe(configs[0]);
    expect(configs[2]).toBe(configs[0]);
  });

  test('a killed leader hands over within the lease, and the leader duties go on', async () => {
    const leader = await leaderOf();
    if (!leader) throw new Error('no leader');
    const killedAt = Date.now();
    await leader.stop('SIGKILL');
    await waitFor(async () => (await leaderOf()) !== undefined, { timeoutMs: 40_000, intervalMs: 100, description: 'a new leader' });
    const handOverMs = Date.now() - killedAt;
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'after-handover' } } });
    await waitFor(
      async () => (await core.readNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'after-handover' }).catch(() => undefined)) !== undefined,
      { timeoutMs: 20_000, description: 'the root published by the new leader' },
    );
    // No missed status: a policy created after the hand-over gets its status from the new leader.
    const policyFile = join(workDir, 'after-handover-policy.yaml');
    writeFileSync(
      policyFile,
      'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: strict, namespace: foo}\nspec: {mtls: {mode: STRICT}}\n',
    );
    expect((await kubectl('apply', '-f', policyFile)).stderr).toBe('');
    await waitFor(
      async () => {
        const status = JSON.parse((await kubectl('get', 'peerauthentication', 'strict', '-n', 'foo', '-o', 'json')).stdout || '{}') as {
          status?: { conditions?: { type: string; status: string }[] };
        };
        return status.status?.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True') ?? false;
      },
      { timeoutMs: 20_000, description: 'the new leader writing the status' },
    );
    const memory = await Promise.all(live().map(async (r) => `${r.podName} ${((await metric(r, 'process_resident_memory_bytes')) / 1024 / 1024) | 0} MB`));
    console.log(`leader hand-over after a SIGKILL: ${handOverMs} ms (lease 15 s); replica RSS: ${memory.join(', ')}`);
    // client-go's rule: the lease lapses 15 s after the renewal a candidate last saw (seen up to one
    // 2 s retry, jittered by 1.2, after it was made), and the next retry takes it: at most about
    // 15 + 2 × 2.4 s after the kill, with 3 s for a loaded machine.
    expect(handOverMs).toBeLessThan(15_000 + 2 * 2_400 + 3_000);
    // Nothing lost: the root is the one all replicas started with.
    const roots = new Set(
      (await core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.name=mesh-ca-root-cert' })).items.map((c) => c.data?.['root-cert.pem']),
    );
    expect(roots.size).toBe(1);
  });
});
