import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { credentials } from '@grpc/grpc-js';
import { serviceFromObject, workloadFromPod } from '../controllers/index.js';
import { waitFor } from '../testing/wait-for.js';
import { newDeltaDiscoveryClient, type DeltaDiscoveryClient, type DeltaDiscoveryResponse } from './envoy/delta-discovery-client.js';
import { loadEnvoyProtos } from './envoy/envoy-protos.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE, shortType } from './envoy/type-urls.js';
import type { PushContext } from './model/index.js';
import { buildCase, valuesOf, type CaseObject } from './generators/testing/test-cases.js';
import type { PushChange } from './push/push-request.js';
import { applyValidated, DENY_HTTPBIN_FROM_BAR, startMeshXds, type MeshXds } from './testing/mesh-xds.js';
import { nodeFor } from './testing/test-support.js';
import type { XdsServer } from './xds-server.js';

// Delta pushes with the mesh's own generators: whatever a push says may have changed, a proxy is
// sent only the resources whose bytes differ from what it holds, and nothing when none do.
const service = (name: string, namespace: string, port: number): CaseObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { clusterIP: `10.96.0.${port % 250}`, selector: { app: name }, ports: [{ name: 'http', port, targetPort: 8080 }] },
});
const pod = (name: string, namespace: string, app: string, ip: string): CaseObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app, 'security.mesh.io/tlsMode': 'mesh' }, annotations: { 'sidecar.mesh.io/status': 'injected' } },
  spec: { serviceAccountName: app, containers: [{ name: app, ports: [{ containerPort: 8080 }] }] },
  status: { podIP: ip, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

const { model } = buildCase(
  [
    service('httpbin', 'foo', 8000),
    pod('httpbin-1', 'foo', 'httpbin', '10.1.0.1'),
    service('other', 'bar', 80),
    pod('other-1', 'bar', 'other', '10.2.0.1'),
    { kind: 'ProxyNode', id: 'sidecar~10.1.0.1~httpbin-1.foo~foo.svc.cluster.local' },
  ],
  'the delta push mesh',
);
const protos = loadEnvoyProtos();
let server: MeshXds;
let xds: XdsServer<PushContext>;
let client: DeltaDiscoveryClient;
const responses: DeltaDiscoveryResponse[] = [];
let taken = 0;
let barriers = 0;

const connection = () => xds.discovery.findConnection('httpbin-1.foo');

function push(request: Partial<PushChange> = {}): void {
  server.push(request);
}

/** Subscribes to a secret no one has and waits for the answer: every response the daemon owed before it has arrived. */
async function barrier(): Promise<void> {
  const name = `barrier-${++barriers}`;
  client.subscribe(SECRET_TYPE, [name]);
  await waitFor(() => responses.slice(taken).some((response) => response.type_url === SECRET_TYPE && response.removed_resources.includes(name)), {
    description: 'the barrier answered',
  });
}

/**
 * The responses since the last call. Two barriers: the first ensures the client received what was
 * pushed (and so sent the subscriptions it makes on receipt, EDS after CDS and RDS after LDS); the
 * second, that the answers to those arrived too.
 */
async function responsesOwed(): Promise<{ type: string; names: string[]; removed: string[] }[]> {
  await barrier();
  await barrier();
  const owed = responses.slice(taken).filter((response) => response.type_url !== SECRET_TYPE);
  taken = responses.length;
  return owed.map((response) => ({
    type: shortType(response.type_url),
    names: response.resources.map((resource) => resource.name).sort(),
    removed: [...response.removed_resources].sort(),
  }));
}

/** Waits until the full push in effect reached the proxy. */
async function pushed(): Promise<void> {
  await waitFor(
    () => {
      const version = xds.discovery.lastPush()?.version;
      return version !== undefined && connection()?.lastPushVersion === version && xds.discovery.pendingPushes() === 0;
    },
    { description: 'the push done' },
  );
}

beforeAll(async () => {
  server = await startMeshXds(protos, model);
  xds = server.xds;
  client = newDeltaDiscoveryClient({
    protos,
    target: `127.0.0.1:${server.port}`,
    credentials: credentials.createInsecure(),
    node: { ...nodeFor('httpbin-1', 'foo'), id: 'sidecar~10.1.0.1~httpbin-1.foo~foo.svc.cluster.local' },
    initial: [
      [CLUSTER_TYPE, []],
      [LISTENER_TYPE, []],
    ],
    onResponse(response) {
      responses.push(response);
      client.ack(response);
      // As Envoy: EDS for the EDS clusters held, RDS for the routes the listeners held name.
      if (response.type_url === CLUSTER_TYPE)
        client.subscribe(
          ENDPOINT_TYPE,
          [...client.versions(CLUSTER_TYPE).keys()].filter((name) => name.startsWith('outbound|')),
        );
      if (response.type_url === LISTENER_TYPE) client.subscribe(ROUTE_TYPE, [...valuesOf(client.decode(response).resources, 'route_config_name')].sort());
    },
  });
  client.start();
  await waitFor(() => [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE].every((type) => responses.some((response) => response.type_url === type)), {
    description: 'every type answered',
  });
  await responsesOwed();
});

afterAll(async () => {
  client?.close();
  await server?.close();
});

describe('delta pushes with the mesh generators', () => {
  test('a full push where nothing changed sends nothing', async () => {
    push();
    await pushed();
    expect(await responsesOwed()).toEqual([]);
  });

  test('an endpoint change sends the one ClusterLoadAssignment that changed', async () => {
    const moved = workloadFromPod(pod('other-1', 'bar', 'other', '10.2.0.2'), 'cluster-a');
    const result = model.registry.applyWorkload(moved ?? (undefined as never));
    push({ full: false, reason: 'endpoint', configsUpdated: result.endpointsChanged.map((key) => ({ kind: 'Service' as const, ...key })) });
    await waitFor(() => responses.length > taken, { description: 'the EDS push' });
    expect(await responsesOwed()).toEqual([{ type: 'eds', names: ['outbound|80||other.bar.svc.cluster.local'], removed: [] }]);
  });

  test('a policy on the proxy’s workload, pushed as "anything may have changed", sends only the listener it changes', async () => {
    applyValidated(model, DENY_HTTPBIN_FROM_BAR);
    push();
    await pushed();
    expect(await responsesOwed()).toEqual([{ type: 'lds', names: ['virtualInbound'], removed: [] }]);
  });

  test('a new service sends its cluster, its endpoints and what routes to it, nothing else; its deletion, their removals', async () => {
    const added = serviceFromObject(service('added', 'bar', 9090), 'cluster.local');
    if (!added) throw new Error('bad service');
    model.registry.applyService(added);
    push();
    await pushed();
    const owed = await responsesOwed();
    const cluster = 'outbound|9090||added.bar.svc.cluster.local';
    expect(owed.filter((response) => response.type === 'cds')).toEqual([{ type: 'cds', names: [cluster], removed: [] }]);
    expect(owed.filter((response) => response.type === 'eds')).toEqual([{ type: 'eds', names: [cluster], removed: [] }]);
    // Listeners and routes: only those of the new port.
    const others = owed.filter((response) => response.type === 'lds' || response.type === 'rds');
    expect(others.length).toBeGreaterThan(0);
    expect(others.flatMap((response) => [...response.names, ...response.removed]).every((name) => name.includes('9090'))).toBe(true);

    model.registry.deleteService('bar', 'added');
    push();
    await pushed();
    const removed = await responsesOwed();
    expect(removed.filter((response) => response.type === 'cds')).toEqual([{ type: 'cds', names: [], removed: [cluster] }]);
    expect(removed.flatMap((response) => [...response.names, ...response.removed]).every((name) => name.includes('9090'))).toBe(true);
    expect(client.versions(ENDPOINT_TYPE).has(cluster)).toBe(false);
  });
});
