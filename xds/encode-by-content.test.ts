import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { credentials } from '@grpc/grpc-js';
import { waitFor } from '../testing/wait-for.js';
import { newDiscoveryClient, type DiscoveryClient, type DiscoveryResponse } from './envoy/discovery-client.js';
import { loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import { CLUSTER_TYPE, LISTENER_TYPE } from './envoy/type-urls.js';
import { buildCase, type CaseObject } from './generators/testing/test-cases.js';
import { applyValidated, DENY_HTTPBIN_FROM_BAR, startMeshXds, type MeshXds } from './testing/mesh-xds.js';
import { nodeFor } from './testing/test-support.js';

// A proxy's own resources (its `virtualInbound` listener, its inbound clusters) have no cache key:
// proxies whose messages are equal get them encoded once per push, and each proxy still gets
// exactly its own. Three proxies over gRPC: two pods of one Deployment and a pod of another app.
const service = (name: string, port: number): CaseObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'foo' },
  spec: { clusterIP: `10.96.0.${port % 250}`, selector: { app: name }, ports: [{ name: 'http', port, targetPort: port }] },
});
const pod = (name: string, app: string, ip: string, port: number): CaseObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'foo', labels: { app, 'security.mesh.io/tlsMode': 'mesh' }, annotations: { 'sidecar.mesh.io/status': 'injected' } },
  spec: { serviceAccountName: app, containers: [{ name: app, ports: [{ containerPort: port }] }] },
  status: { podIP: ip, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});
const PODS = [
  { name: 'httpbin-1', ip: '10.1.0.1' },
  { name: 'httpbin-2', ip: '10.1.0.2' },
  { name: 'other-1', ip: '10.1.0.3' },
] as const;

const { model } = buildCase(
  [
    service('httpbin', 8000),
    pod('httpbin-1', 'httpbin', '10.1.0.1', 8000),
    pod('httpbin-2', 'httpbin', '10.1.0.2', 8000),
    service('other', 9000),
    pod('other-1', 'other', '10.1.0.3', 9000),
    { kind: 'ProxyNode', id: 'sidecar~10.1.0.1~httpbin-1.foo~foo.svc.cluster.local' },
  ],
  'proxies alike',
);
const loaded = loadEnvoyProtos();
/** What the daemon encoded: the listener names and cluster names, in order. */
const encodedNames: string[] = [];
const protos: EnvoyProtos = {
  ...loaded,
  encodeAny(typeUrl, message) {
    if (typeUrl === LISTENER_TYPE || typeUrl === CLUSTER_TYPE) encodedNames.push(String((message as { name?: string }).name));
    return loaded.encodeAny(typeUrl, message);
  },
};
let server: MeshXds;
const clients = new Map<string, DiscoveryClient>();
/** The last response of each type each proxy got. */
const latest = new Map<string, Map<string, DiscoveryResponse>>();

/** The bytes of a proxy's resource of one type, by name, as the last response carried them. */
function bytesOf(pod: string, typeUrl: string, name: string): Buffer {
  const response = latest.get(pod)?.get(typeUrl);
  const client = clients.get(pod);
  if (!response || !client) throw new Error(`no ${typeUrl} for ${pod}`);
  const index = client.decode(response).findIndex((resource) => resource['name'] === name);
  return Buffer.from(response.resources[index]?.value ?? []);
}

async function pushAndWait(): Promise<void> {
  const versions = PODS.map((proxy) => latest.get(proxy.name)?.get(LISTENER_TYPE)?.version_info);
  server.push();
  await waitFor(
    () =>
      PODS.every((proxy, i) => {
        const got = latest.get(proxy.name);
        return got?.get(LISTENER_TYPE)?.version_info !== versions[i] && got?.get(CLUSTER_TYPE)?.version_info === got?.get(LISTENER_TYPE)?.version_info;
      }),
    { description: 'every proxy pushed' },
  );
}

beforeAll(async () => {
  server = await startMeshXds(protos, model);
  for (const proxy of PODS) {
    const responses = new Map<string, DiscoveryResponse>();
    latest.set(proxy.name, responses);
    const client = newDiscoveryClient({
      protos: loaded,
      target: `127.0.0.1:${server.port}`,
      credentials: credentials.createInsecure(),
      node: { ...nodeFor(proxy.name, 'foo'), id: `sidecar~${proxy.ip}~${proxy.name}.foo~foo.svc.cluster.local` },
      initial: [
        [CLUSTER_TYPE, []],
        [LISTENER_TYPE, []],
      ],
      onResponse(response) {
        responses.set(response.type_url, response);
        client.ack(response);
      },
    });
    clients.set(proxy.name, client);
    client.start();
  }
  await waitFor(() => PODS.every((proxy) => latest.get(proxy.name)?.has(LISTENER_TYPE) && latest.get(proxy.name)?.has(CLUSTER_TYPE)), {
    description: 'every proxy answered',
  });
});

afterAll(async () => {
  for (const client of clients.values()) client.close();
  await server?.close();
});

describe('resources without a cache key, encoded once per distinct message', () => {
  test('two pods of one app get the same listener and inbound cluster bytes, encoded once; the other app its own', async () => {
    encodedNames.length = 0;
    await pushAndWait();
    const [one, two, other] = PODS.map((proxy) => bytesOf(proxy.name, LISTENER_TYPE, 'virtualInbound'));
    expect(one?.equals(two as Buffer)).toBe(true);
    expect(one?.equals(other as Buffer)).toBe(false);
    expect(bytesOf('httpbin-1', CLUSTER_TYPE, 'inbound|8000||').equals(bytesOf('httpbin-2', CLUSTER_TYPE, 'inbound|8000||'))).toBe(true);
    expect(encodedNames.filter((name) => name === 'virtualInbound')).toHaveLength(2);
    expect(encodedNames.filter((name) => name === 'inbound|8000||')).toHaveLength(1);
    // What each proxy got is what encoding its own message gives.
    const decoded = clients.get('other-1')?.decode(latest.get('other-1')?.get(LISTENER_TYPE) as DiscoveryResponse) ?? [];
    expect(JSON.stringify(decoded.find((listener) => listener['name'] === 'virtualInbound'))).toContain('inbound|9000||');
  });

  test('a policy for one app changes its pods’ listener in the next push; the other app’s is untouched and nothing stale is reused', async () => {
    const before = PODS.map((proxy) => bytesOf(proxy.name, LISTENER_TYPE, 'virtualInbound'));
    applyValidated(model, DENY_HTTPBIN_FROM_BAR);
    await pushAndWait();
    const after = PODS.map((proxy) => bytesOf(proxy.name, LISTENER_TYPE, 'virtualInbound'));
    expect(after[0]?.equals(before[0] as Buffer)).toBe(false);
    expect(after[0]?.equals(after[1] as Buffer)).toBe(true);
    expect(after[2]?.equals(before[2] as Buffer)).toBe(true);
    const decoded = clients.get('httpbin-1')?.decode(latest.get('httpbin-1')?.get(LISTENER_TYPE) as DiscoveryResponse) ?? [];
    expect(JSON.stringify(decoded.find((listener) => listener['name'] === 'virtualInbound'))).toContain('ns[foo]-policy[deny-bar]-rule[0]');
  });
});
