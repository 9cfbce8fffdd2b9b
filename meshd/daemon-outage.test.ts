import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { loadSettings } from '../runtime/index.js';
import { buildCrdManifests } from '../crds/crd-manifests.js';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { CLUSTER_TYPE, loadEnvoyProtos } from '../xds/index.js';
import { newAdsTestClient, nodeFor, type AdsTestClient } from '../xds/testing/test-support.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess, type InProcessMeshd } from './testing/in-process-meshd.js';

// The daemon in Kubernetes mode when the API server goes away, run in process with a short lease:
// started while the API server refuses connections it stays up and not ready, then serves once it
// answers; an outage longer than the lease costs it only its leader duties (xDS keeps serving
// from its caches), which resume when it wins the lease again.
const LEASE = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 400 };

let kube: ApiServerDouble;
let workDir: string;
let logFile: string;
let httpPort: number;
let grpcPort: number;
let daemon: InProcessMeshd | undefined;
let daemonSettled = false;
let client: AdsTestClient;

const logText = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
const readiness = async (): Promise<number> => (await fetch(`http://127.0.0.1:${httpPort}/ready`).catch(() => undefined))?.status ?? 0;

beforeAll(async () => {
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  const kubeConfig = kube.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name } } });
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
  await core.createNamespacedService({
    namespace: 'foo',
    body: { metadata: { name: 'httpbin' }, spec: { selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000, targetPort: 80 as never }] } },
  });
  workDir = mkdtempSync(join(tmpdir(), 'daemon-outage-'));
  logFile = join(workDir, 'meshd.log');
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
  [httpPort, grpcPort] = await Promise.all([freePort(), freePort()]);
  client = newAdsTestClient(loadEnvoyProtos(), grpcPort);
});

afterAll(async () => {
  client?.close();
  await daemon?.stop();
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the daemon while the API server is unreachable', () => {
  test('started while the API server refuses connections: up and not ready, retrying; ready once it answers', async () => {
    kube.faults.refuseConnections(true);
    const settings = loadSettings('pilot-discovery', { POD_NAME: 'meshd-outage', ECC_SIGNATURE_ALGORITHM: 'ECDSA' });
    daemon = startMeshdInProcess(
      meshdTestOptions(settings, {
        kubeConfigPath: join(workDir, 'kubeconfig'),
        grpcAddr: `127.0.0.1:${grpcPort}`,
        httpAddr: `127.0.0.1:${httpPort}`,
        logging: loggingTo(logFile),
        leaderElectionTimings: LEASE,
      }),
    );
    void daemon.done.then(() => (daemonSettled = true));
    await waitFor(async () => (await readiness()) === 503, { timeoutMs: 10_000, description: 'the daemon answering, not ready' });
    await waitFor(() => /start-up step failed; retrying/.test(logText()), { timeoutMs: 10_000, description: 'the CA retrying' });
    expect(daemonSettled).toBe(false);

    kube.faults.refuseConnections(false);
    await waitFor(async () => (await readiness()) === 200, { timeoutMs: 40_000, intervalMs: 200, description: 'the daemon ready once the API server answers' });
    const leases = kube.kubeConfig().makeApiClient(CoordinationV1Api);
    await waitFor(
      async () =>
        ((await leases.readNamespacedLease({ name: 'meshd-leader', namespace: 'mesh-system' })).spec?.holderIdentity ?? '').startsWith('meshd-outage'),
      {
        timeoutMs: 15_000,
        description: 'the daemon leading',
      },
    );
  }, 90_000);

  test('an outage longer than the lease: xDS keeps serving, leader duties stop, then resume when the API server returns', async () => {
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    const before = client.sotw();
    before.send({ node: nodeFor('sleep-1', 'foo'), type_url: CLUSTER_TYPE });
    expect((await before.next(5000)).resources.length).toBeGreaterThan(0);

    kube.faults.refuseConnections(true);
    await waitFor(() => /leadership lost/.test(logText()), { timeoutMs: 15_000, intervalMs: 100, description: 'the lease lost during the outage' });
    expect(daemonSettled).toBe(false);
    // Still serving: the open stream lives, and a new proxy gets its config from the caches.
    const during = client.sotw();
    during.send({ node: nodeFor('sleep-2', 'foo'), type_url: CLUSTER_TYPE });
    expect((await during.next(5000)).resources.length).toBeGreaterThan(0);
    expect(await readiness()).toBe(200);

    kube.faults.refuseConnections(false);
    // A leader duty: the root certificate is published in a namespace created after the outage.
    await core.createNamespace({ body: { metadata: { name: 'after-outage' } } });
    await waitFor(
      async () => (await core.readNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'after-outage' }).catch(() => undefined)) !== undefined,
      {
        timeoutMs: 40_000,
        intervalMs: 200,
        description: 'the root certificate published by the leader again',
      },
    );
    expect(daemonSettled).toBe(false);
    before.cancel();
    during.cancel();
  }, 90_000);
});
