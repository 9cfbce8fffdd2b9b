import { credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { loadSettings } from '../../runtime/index.js';
import { newRecordingLogger } from '../../testing/recording-logger.js';
import type { WorkloadEntryController } from '../../controllers/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { loadEnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { jsonToStruct, type JsonValue } from '../../xds/envoy/struct-json.js';
import { CLUSTER_TYPE } from '../../xds/envoy/type-urls.js';
import { newAdsTestClient, startTestXds, worldGenerators, type AdsTestClient, type TestXds } from '../../xds/testing/test-support.js';
import { agentSettingsFromSettings } from '../agent-settings.js';
import { healthReport } from '../health/workload-health.js';
import { buildProxyIdentity, loadProxyConfig, type ProxyIdentity } from '../proxy/proxy-identity.js';
import { newAgentReports, type AgentReports } from './agent-reports.js';
import { newXdsProxy, type XdsProxy } from './xds-proxy.js';

// The agent's health reports on the proxy's stream, through the agent's xDS proxy to the real xDS
// server: written when they change, and the last one again on each new stream. The test server
// has no handler of the type: it decides a healthy report (no names, no error) as an unsubscribe
// and an unhealthy one (error_detail) as a NACK, and logs both; the log is what is observed here.
// The node is a VM's, built from a mesh.yaml's proxyMetadata as the agent builds it.
const protos = loadEnvoyProtos();
let upstream: TestXds;
let proxy: XdsProxy;
let client: AdsTestClient;
let reports: AgentReports;

function vmIdentity(name: string): ProxyIdentity {
  const proxyConfig = loadProxyConfig(
    '/nonexistent/mesh',
    JSON.stringify({
      proxyMetadata: {
        POD_NAMESPACE: 'vms',
        SERVICE_ACCOUNT: 'vm-sa',
        MESH_META_WORKLOAD_NAME: 'vm-app',
        MESH_META_AUTO_REGISTER_GROUP: 'vm-app',
        MESH_META_DNS_CAPTURE: 'true',
        MESH_METAJSON_LABELS: JSON.stringify({ app: 'vm-app', 'service.mesh.io/canonical-name': 'vm-app' }),
      },
      readinessProbe: { httpGet: { port: 8080 } },
    }),
  );
  const settings = loadSettings('pilot-agent', { POD_NAME: name, INSTANCE_IP: '10.1.0.5' }).withUnderlay(proxyConfig.proxyMetadata ?? {});
  return buildProxyIdentity({ type: 'sidecar', pod: agentSettingsFromSettings(settings).pod, domain: '', proxyConfig, meshVersion: '1.2.0' });
}

/** The health reports the daemon took from one connection, in order, as its WorkloadEntry controller gets them. */
const reported = new Map<string, { event: string; error?: unknown }[]>();
const recordingEntries: WorkloadEntryController = {
  connect: async () => undefined,
  disconnect: () => undefined,
  reportHealth(connectionId, report) {
    const list = reported.get(connectionId) ?? [];
    list.push(report.healthy ? { event: 'healthy' } : { event: 'unhealthy', error: report.message });
    reported.set(connectionId, list);
  },
  sweep: async () => undefined,
  settled: async () => undefined,
  runnables: [],
};

function healthSeen(connection: string | undefined): { event: string; error?: unknown }[] {
  return reported.get(connection ?? '') ?? [];
}

beforeAll(async () => {
  upstream = await startTestXds(protos, { generators: worldGenerators(), workloadEntries: recordingEntries });
  await upstream.sync();
  reports = newAgentReports();
  proxy = newXdsProxy({
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${upstream.port}`,
    credentials: credentials.createInsecure(),
    metadata: async () => new Metadata(),
    log: newRecordingLogger([], {}, 'adsc'),
    agentSubscriptions: { protos: () => protos, subscriptions: [], reports },
  });
  client = newAdsTestClient(protos, await proxy.start());
});

afterAll(async () => {
  client?.close();
  await proxy?.stop();
  await upstream?.close();
});

describe.each(['sotw', 'delta'] as const)('health reports on a %s stream', (flavour) => {
  test("reach the daemon after the proxy's first request, on each change, and again after a reconnect", async () => {
    const identity = vmIdentity(`vm-${flavour}`);
    const proxyId = `vm-${flavour}.vms`;
    const node = { id: identity.nodeId, metadata: jsonToStruct(identity.metadata as Record<string, JsonValue>) };
    const first = flavour === 'sotw' ? { resource_names: [] } : { resource_names_subscribe: [] };
    reports.send(healthReport({ healthy: false, message: 'the app is starting' }));

    const stream = client[flavour]();
    stream.send({ node, type_url: CLUSTER_TYPE, ...first });
    expect((await stream.next(5_000)).type_url).toBe(CLUSTER_TYPE);
    const con = await waitFor(() => upstream.discovery.findConnection(proxyId), { description: 'the connection at the daemon' });
    // The node metadata the daemon sees: proxyMetadata as metadata, the VM's labels.
    expect(con.proxy.metadata.labels).toEqual({ app: 'vm-app', 'service.mesh.io/canonical-name': 'vm-app' });
    expect(con.proxy.metadata.raw).toMatchObject({ WORKLOAD_NAME: 'vm-app', AUTO_REGISTER_GROUP: 'vm-app', DNS_CAPTURE: 'true', NAMESPACE: 'vms' });
    expect(con.proxy.metadata.raw).not.toHaveProperty('MESH_META_WORKLOAD_NAME');
    // The last report, after the first request.
    await waitFor(() => healthSeen(con.id).length === 1, { description: 'the report at the daemon' });
    expect(healthSeen(con.id)).toEqual([{ event: 'unhealthy', error: 'the app is starting' }]);

    reports.send(healthReport({ healthy: true }));
    await waitFor(() => healthSeen(con.id).length === 2, { description: 'the healthy report' });
    reports.send(healthReport({ healthy: false, message: 'status code was not from [200,400), bad code 503' }));
    await waitFor(() => healthSeen(con.id).length === 3, { description: 'the unhealthy report' });
    expect(healthSeen(con.id)).toEqual([
      { event: 'unhealthy', error: 'the app is starting' },
      { event: 'healthy' },
      { event: 'unhealthy', error: 'status code was not from [200,400), bad code 503' },
    ]);
    // The proxy never sees them.
    expect(stream.buffered()).toBe(0);

    // The proxy reconnects: the new stream gets the last report after its first request.
    stream.cancel();
    await waitFor(() => upstream.discovery.findConnection(proxyId) === undefined, { description: 'the old connection gone' });
    const again = client[flavour]();
    again.send({ node, type_url: CLUSTER_TYPE, ...first });
    expect((await again.next(5_000)).type_url).toBe(CLUSTER_TYPE);
    const next = await waitFor(() => upstream.discovery.findConnection(proxyId), { description: 'the new connection' });
    expect(next.id).not.toBe(con.id);
    await waitFor(() => healthSeen(next.id).length === 1, { description: 'the report re-sent' });
    expect(healthSeen(next.id)).toEqual([{ event: 'unhealthy', error: 'status code was not from [200,400), bad code 503' }]);
    expect(healthSeen(con.id)).toHaveLength(3);
    again.cancel();
    await waitFor(() => upstream.discovery.findConnection(proxyId) === undefined, { description: 'the connection closed' });
  });
});
