import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { buildCrdManifests } from '../crds/crd-manifests.js';
import { loadSettings } from '../runtime/index.js';
import { kubectl } from '../testing/kubectl.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, HEALTH_INFORMATION_TYPE, loadEnvoyProtos, type JsonValue } from '../xds/index.js';
import { newAdsTestClient, nodeFor, type AdsTestClient, type AdsTestStream, type ResponseMessage } from '../xds/testing/test-support.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess, type InProcessMeshd } from './testing/in-process-meshd.js';

// WorkloadEntry auto-registration and health (issue 35 item 3): the daemon in process in
// Kubernetes mode against the API server double, VM proxies connecting over plain text with their
// service account tokens (XDS_AUTH_PLAINTEXT; the xDS identity check off, so that auto-registration's
// own check is the one that refuses), entries read back with the real kubectl.
const protos = loadEnvoyProtos();
const GRACE_MS = 300;
const HOST = 'ratings.vm.example';
const CLUSTER = `outbound|9080||${HOST}`;

let kube: ApiServerDouble;
let daemon: InProcessMeshd | undefined;
let workDir: string;
let kubeconfig: string;
let ads: AdsTestClient;
let groupUid = '';
const ports = { grpc: 0, http: 0, monitoring: 0 };
const streams: AdsTestStream[] = [];

const get = (args: readonly string[]) => kubectl({ kubeconfig, home: workDir }, args);

interface EntryJson {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: unknown[] };
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; message?: string; lastProbeTime?: string; lastTransitionTime?: string }[] };
}

async function entry(name: string): Promise<EntryJson | undefined> {
  const result = await get(['get', 'workloadentries.networking.mesh.io', name, '-n', 'vm', '-o', 'json']);
  return result.code === 0 ? (JSON.parse(result.stdout) as EntryJson) : undefined;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ports.monitoring}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** A VM proxy of vm/<account> with its token, registering with the group `ratings` from `ip`. */
function vmStream(ip: string, token: { namespace: string; serviceAccount: string }, extra: Record<string, JsonValue> = {}): AdsTestStream {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${kube.issueToken({ ...token, audiences: ['mesh-ca'] })}`);
  const stream = ads.sotw(metadata);
  streams.push(stream);
  stream.send({
    node: nodeFor(`vm-${ip}`, 'vm', {
      SERVICE_ACCOUNT: token.serviceAccount,
      AUTO_REGISTER_GROUP: 'ratings',
      INSTANCE_IPS: ip,
      ...extra,
    }),
    type_url: CLUSTER_TYPE,
    resource_names: [],
  });
  return stream;
}

/** The endpoint addresses of the EDS response. */
function endpointAddresses(response: ResponseMessage): string[] {
  return response.resources.flatMap((any) => {
    const assignment = protos.decodeAny({ type_url: any.type_url ?? '', value: any.value ?? Buffer.alloc(0) }) as {
      endpoints?: { lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[] }[];
    };
    return (assignment.endpoints ?? []).flatMap((locality) => (locality.lb_endpoints ?? []).map((lb) => lb.endpoint?.address?.socket_address?.address ?? ''));
  });
}

/** Takes responses until one of the type satisfies `accept`; every other response must be of a config type. */
async function nextOf(stream: AdsTestStream, typeUrl: string, accept: (response: ResponseMessage) => boolean): Promise<ResponseMessage> {
  for (;;) {
    const response = await stream.next(10_000);
    expect(response.type_url).not.toBe(HEALTH_INFORMATION_TYPE);
    stream.send({
      type_url: response.type_url,
      version_info: response.version_info,
      response_nonce: response.nonce,
      resource_names: response.type_url === ENDPOINT_TYPE ? [CLUSTER] : [],
    });
    if (response.type_url === typeUrl && accept(response)) return response;
  }
}

beforeAll(async () => {
  [ports.grpc, ports.http, ports.monitoring] = await Promise.all([freePort(), freePort(), freePort()]);
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  const admin = kube.kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'vm', 'other']) await core.createNamespace({ body: { metadata: { name } } });
  for (const crd of buildCrdManifests()) await admin.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd as never });
  for (const [namespace, name] of [
    ['vm', 'ratings'],
    ['vm', 'other'],
    ['other', 'ratings'],
  ] as const) {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  }
  const custom = admin.makeApiClient(CustomObjectsApi);
  const group = (await custom.createNamespacedCustomObject({
    group: 'networking.mesh.io',
    version: 'v1',
    namespace: 'vm',
    plural: 'workloadgroups',
    body: {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'WorkloadGroup',
      metadata: { name: 'ratings' },
      spec: {
        metadata: { labels: { app: 'ratings', tier: 'group' }, annotations: { owner: 'team-a' } },
        template: { serviceAccount: 'ratings', ports: { http: 9080 }, labels: { app: 'template', tier: 'template', track: 'stable' } },
        probe: { httpGet: { port: 9080, path: '/ready' } },
      },
    },
  })) as { metadata: { uid: string } };
  groupUid = group.metadata.uid;
  await custom.createNamespacedCustomObject({
    group: 'networking.mesh.io',
    version: 'v1',
    namespace: 'vm',
    plural: 'serviceentries',
    body: {
      apiVersion: 'networking.mesh.io/v1',
      kind: 'ServiceEntry',
      metadata: { name: 'ratings' },
      spec: {
        hosts: [HOST],
        location: 'MESH_INTERNAL',
        resolution: 'STATIC',
        ports: [{ number: 9080, name: 'http', protocol: 'HTTP' }],
        workloadSelector: { labels: { app: 'ratings' } },
      },
    },
  });

  workDir = mkdtempSync(join(tmpdir(), 'meshd-wle-'));
  kubeconfig = join(workDir, 'kubeconfig');
  await kube.writeKubeconfig(kubeconfig);
  const settings = loadSettings('pilot-discovery', {
    POD_NAME: 'meshd-wle',
    XDS_AUTH_PLAINTEXT: 'true',
    PILOT_ENABLE_XDS_IDENTITY_CHECK: 'false',
    PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: `${GRACE_MS}ms`,
    PILOT_DEBOUNCE_AFTER: '10ms',
    PILOT_DEBOUNCE_MAX: '100ms',
  });
  daemon = startMeshdInProcess(
    meshdTestOptions(settings, {
      kubeConfigPath: kubeconfig,
      grpcAddr: `127.0.0.1:${ports.grpc}`,
      httpAddr: `127.0.0.1:${ports.http}`,
      monitoringAddr: `127.0.0.1:${ports.monitoring}`,
      logging: loggingTo(join(workDir, 'meshd.log')),
    }),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    description: 'the daemon ready',
  });
  ads = newAdsTestClient(protos, ports.grpc);
}, 60_000);

afterAll(async () => {
  for (const stream of streams) stream.cancel();
  ads?.close();
  await daemon?.stop();
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('WorkloadEntry auto-registration', () => {
  test('a VM proxy of the group gets its entry from the template; health reports flip its condition and its endpoint in EDS; disconnected, it goes after the grace period', async () => {
    const name = 'ratings-10.1.2.3-vm-net';
    const before = { success: await metric('auto_registration_success_total'), unregister: await metric('auto_registration_unregister_total') };
    const deletesBefore = await metric('auto_registration_deletes_total');
    const stream = vmStream(
      '10.1.2.3',
      { namespace: 'vm', serviceAccount: 'ratings' },
      {
        NETWORK: 'vm-net',
        LABELS: { version: 'v2', app: 'ratings', 'mesh-locality': 'region-1/zone-1' },
        PROXY_CONFIG: { readinessProbe: { httpGet: { port: 9080, path: '/ready' } } },
      },
    );
    await nextOf(stream, CLUSTER_TYPE, () => true);

    const registered = await entry(name);
    expect(registered?.metadata.labels).toEqual({ app: 'ratings', tier: 'group', track: 'stable', version: 'v2' });
    expect(registered?.metadata.annotations).toEqual({
      'mesh.io/autoRegistrationGroup': 'ratings',
      owner: 'team-a',
      'proxy.mesh.io/health-checks-enabled': 'true',
      'mesh.io/workloadController': 'meshd-wle',
      'mesh.io/connectedAt': expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/),
    });
    expect(registered?.metadata.ownerReferences).toEqual([
      // The version the daemon reads groups at (KINDS), as the reference takes the group's own.
      { apiVersion: 'networking.mesh.io/v1alpha3', kind: 'WorkloadGroup', name: 'ratings', uid: groupUid, controller: true },
    ]);
    expect(registered?.spec).toEqual({
      address: '10.1.2.3',
      serviceAccount: 'ratings',
      ports: { http: 9080 },
      labels: { app: 'ratings', tier: 'group', track: 'stable', version: 'v2' },
      network: 'vm-net',
      locality: 'region-1/zone-1',
    });
    expect(await metric('auto_registration_success_total')).toBe(before.success + 1);

    // Health checks on and nothing reported yet: the endpoint is not ready.
    stream.send({ type_url: ENDPOINT_TYPE, resource_names: [CLUSTER] });
    expect(endpointAddresses(await nextOf(stream, ENDPOINT_TYPE, () => true))).toEqual([]);

    stream.send({ type_url: HEALTH_INFORMATION_TYPE });
    const healthy = await waitFor(async () => (await entry(name))?.status?.conditions?.find((c) => c.type === 'Healthy' && c.status === 'True'), {
      description: 'Healthy=True',
    });
    expect(healthy.message).toBeUndefined();
    expect(healthy.lastProbeTime).toBe(healthy.lastTransitionTime);
    await nextOf(stream, ENDPOINT_TYPE, (response) => endpointAddresses(response).includes('10.1.2.3'));

    stream.send({ type_url: HEALTH_INFORMATION_TYPE, error_detail: { code: 13, message: 'GET /ready: 503' } });
    const unhealthy = await waitFor(async () => (await entry(name))?.status?.conditions?.find((c) => c.type === 'Healthy' && c.status === 'False'), {
      description: 'Healthy=False',
    });
    expect(unhealthy.message).toBe('GET /ready: 503');
    await nextOf(stream, ENDPOINT_TYPE, (response) => endpointAddresses(response).length === 0);

    stream.cancel();
    const disconnected = await waitFor(async () => (await entry(name))?.metadata.annotations?.['mesh.io/disconnectedAt'], {
      description: 'disconnectedAt',
    });
    const marked = await entry(name);
    // Deleted right after the disconnect is recorded would mean no grace at all; it must still be there.
    expect(marked === undefined || marked.metadata.annotations?.['mesh.io/connectedAt'] === undefined).toBe(true);
    expect(Date.parse(disconnected)).toBeGreaterThan(0);
    await waitFor(async () => (await get(['get', 'workloadentries.networking.mesh.io', name, '-n', 'vm'])).code !== 0, {
      timeoutMs: 5000,
      description: 'the entry deleted after the grace period',
    });
    expect(await metric('auto_registration_unregister_total')).toBe(before.unregister + 1);
    expect(await metric('auto_registration_deletes_total')).toBe(deletesBefore + 1);
  }, 30_000);

  test('a reconnect while the entry exists claims it again (an update, not a new entry); the older stream’s end leaves it connected', async () => {
    const name = 'ratings-10.1.2.5';
    const before = { success: await metric('auto_registration_success_total'), updates: await metric('auto_registration_updates_total') };
    const first = vmStream('10.1.2.5', { namespace: 'vm', serviceAccount: 'ratings' });
    await nextOf(first, CLUSTER_TYPE, () => true);
    const firstConnect = (await entry(name))?.metadata.annotations?.['mesh.io/connectedAt'] ?? '';
    const second = vmStream('10.1.2.5', { namespace: 'vm', serviceAccount: 'ratings' });
    await nextOf(second, CLUSTER_TYPE, () => true);
    expect(await metric('auto_registration_success_total')).toBe(before.success + 1);
    expect(await metric('auto_registration_updates_total')).toBe(before.updates + 1);
    expect(Date.parse((await entry(name))?.metadata.annotations?.['mesh.io/connectedAt'] ?? '')).toBeGreaterThanOrEqual(Date.parse(firstConnect));
    first.cancel();
    await first.status;
    expect((await entry(name))?.metadata.annotations?.['mesh.io/disconnectedAt']).toBeUndefined();
    second.cancel();
    await waitFor(async () => (await get(['get', 'workloadentries.networking.mesh.io', name, '-n', 'vm'])).code !== 0, {
      timeoutMs: 5000,
      description: 'the entry deleted once both streams ended',
    });
  }, 30_000);

  test.each([
    ['a service account other than the template’s', { namespace: 'vm', serviceAccount: 'other' }, 'service account mismatch: "other" vs "ratings"'],
    ['an identity of another namespace', { namespace: 'other', serviceAccount: 'ratings' }, 'namespace mismatch: "other" vs "vm"'],
  ])(
    '%s is refused, counted, and registers nothing',
    async (_case, token, message) => {
      const errorsBefore = await metric('auto_registration_errors_total');
      const stream = vmStream('10.1.2.9', token);
      const ended = await stream.status;
      expect(ended.code).toBe(status.PERMISSION_DENIED);
      expect(ended.details).toContain(message);
      expect(await entry('ratings-10.1.2.9')).toBeUndefined();
      expect(await metric('auto_registration_errors_total')).toBe(errorsBefore + 1);
    },
    30_000,
  );

  test('a group that does not exist fails the stream with FAILED_PRECONDITION', async () => {
    const stream = vmStream('10.1.2.10', { namespace: 'vm', serviceAccount: 'ratings' }, { AUTO_REGISTER_GROUP: 'missing' });
    const ended = await stream.status;
    expect(ended.code).toBe(status.FAILED_PRECONDITION);
    expect(ended.details).toContain('cannot find WorkloadGroup vm/missing');
  }, 30_000);
});
