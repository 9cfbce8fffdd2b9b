import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { loadSettings } from '../runtime/index.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { LISTENER_TYPE, ROUTE_TYPE, loadEnvoyProtos } from '../xds/index.js';
import { newAdsTestClient, nodeFor, type AdsTestClient, type AdsTestStream } from '../xds/testing/test-support.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess, type InProcessMeshd } from './testing/in-process-meshd.js';

// The model's health gauges and the ingestion metrics (issue 39 item 5), as a user sees them: the
// daemon in process over a config folder (EndpointSlices on), the condition made by writing
// config and connecting sidecars over ADS, the metric read from :15014/metrics, and each gauge
// back to 0 once the condition has gone.
const protos = loadEnvoyProtos();
let workDir: string;
let configDir: string;
let daemon: InProcessMeshd | undefined;
let ads: AdsTestClient;
const ports = { grpc: 0, http: 0, monitoring: 0 };
const streams: AdsTestStream[] = [];

function writeConfig(name: string, yaml: string): void {
  writeFileSync(join(configDir, `${name}.yaml`), yaml);
}

function removeConfig(name: string): void {
  rmSync(join(configDir, `${name}.yaml`), { force: true });
}

/** A metric's value on the daemon's /metrics (the sample with exactly these labels). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ports.monitoring}/metrics`)).text();
  const rendered = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .join(',');
  const prefix = rendered === '' ? `${name} ` : `${name}{${rendered}} `;
  const line = text.split('\n').find((candidate) => candidate.startsWith(prefix));
  return line ? Number(line.slice(prefix.length)) : 0;
}

async function metricBecomes(name: string, predicate: (value: number) => boolean, labels: Record<string, string> = {}): Promise<number> {
  let last = NaN;
  await waitFor(
    async () => {
      last = await metric(name, labels);
      return predicate(last);
    },
    { timeoutMs: 10_000, description: `${name} ${JSON.stringify(labels)} (last ${last})` },
  );
  return last;
}

/** A sidecar of `<pod>.<namespace>` at `ip` asking for its listeners (and the routes of `routes`); resolves after the first LDS response. */
async function connectSidecar(pod: string, namespace: string, ip: string, routes: readonly string[] = []): Promise<AdsTestStream> {
  const stream = ads.sotw();
  streams.push(stream);
  const node = { ...nodeFor(pod, namespace, { INSTANCE_IPS: ip }), id: `sidecar~${ip}~${pod}.${namespace}~${namespace}.svc.cluster.local` };
  stream.send({ node, type_url: LISTENER_TYPE, resource_names: [] });
  await stream.next(10_000);
  if (routes.length > 0) {
    stream.send({ node, type_url: ROUTE_TYPE, resource_names: [...routes] });
    await stream.next(10_000);
  }
  return stream;
}

/** The mesh resources the daemon has accepted, from /debug/configz. */
async function acceptedConfig(): Promise<Set<string>> {
  const entries = (await (await fetch(`http://127.0.0.1:${ports.http}/debug/configz`)).json()) as { kind: string; namespace: string; name: string }[];
  return new Set(entries.map((entry) => `${entry.kind}/${entry.namespace}/${entry.name}`));
}

async function configAccepted(keys: readonly string[], present = true): Promise<void> {
  await waitFor(
    async () => {
      const accepted = await acceptedConfig();
      return keys.every((key) => accepted.has(key) === present);
    },
    { timeoutMs: 10_000, description: `${keys.join(', ')} ${present ? 'accepted' : 'gone'}` },
  );
}

/** Waits until `count` more pods (added or updated) have reached the model. */
async function podEvents(event: 'add' | 'update', change: () => void, count = 1): Promise<void> {
  const before = await metric('pilot_orch_reg_events', { type: 'Pod', event });
  change();
  await metricBecomes('pilot_orch_reg_events', (value) => value >= before + count, { type: 'Pod', event });
}

/**
 * A full push that carries everything the model holds now, done: one more VirtualService, seen in
 * `pilot_virt_services` once the push context that has it is built.
 */
let pushes = 0;
async function settledFullPush(): Promise<void> {
  pushes++;
  writeConfig(
    `settle-${pushes}`,
    `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: settle-${pushes}
  namespace: default
spec:
  hosts: [settle-${pushes}.example]
  tcp:
    - route:
        - destination: {host: settle.example}
`,
  );
  await metricBecomes('pilot_virt_services', (value) => value >= pushes);
}

const service = (name: string, namespace: string, port: { name: string; port: number; targetPort?: number }, extra = ''): string =>
  `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  selector:
    app: ${name}
${extra}  ports:
    - name: ${port.name}
      port: ${port.port}
      targetPort: ${port.targetPort ?? port.port}
      protocol: TCP
`;

const pod = (name: string, namespace: string, app: string, ip: string, ready = true): string =>
  `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
  labels:
    app: ${app}
spec:
  serviceAccountName: default
  containers:
    - name: app
      ports:
        - containerPort: 8080
status:
  podIP: ${ip}
  conditions:
    - type: Ready
      status: "${ready ? 'True' : 'False'}"
`;

const serviceEntry = (name: string, spec: string): string =>
  `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: foo
spec:
${spec}`;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'meshd-health-gauges-'));
  configDir = join(workDir, 'config');
  mkdirSync(configDir);
  [ports.grpc, ports.http, ports.monitoring] = await Promise.all([freePort(), freePort(), freePort()]);
  const settings = loadSettings('pilot-discovery', {
    ENABLE_CA_SERVER: 'false',
    POD_NAME: 'meshd-health-gauges',
    PILOT_DEBOUNCE_AFTER: '10ms',
    PILOT_DEBOUNCE_MAX: '100ms',
    PILOT_USE_ENDPOINT_SLICE: 'true',
  });
  writeConfig('namespaces', ['foo', 'bar', 'default'].map((ns) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`).join('---\n'));
  daemon = startMeshdInProcess(
    meshdTestOptions(settings, {
      configDir,
      grpcAddr: `127.0.0.1:${ports.grpc}`,
      secureGrpcAddr: '',
      httpAddr: `127.0.0.1:${ports.http}`,
      monitoringAddr: `127.0.0.1:${ports.monitoring}`,
      logging: loggingTo(join(workDir, 'meshd.log')),
    }),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 20_000,
    description: 'daemon ready',
  });
  ads = newAdsTestClient(protos, ports.grpc);
}, 30_000);

afterAll(async () => {
  for (const stream of streams) stream.cancel();
  ads?.close();
  expect(await daemon?.stop()).toBeUndefined();
  rmSync(workDir, { recursive: true, force: true });
});

describe('ingestion', () => {
  test('pilot_inbound_updates counts config, svc, svcdelete and eds updates', async () => {
    const before = {
      config: await metric('pilot_inbound_updates', { type: 'config' }),
      svc: await metric('pilot_inbound_updates', { type: 'svc' }),
      svcdelete: await metric('pilot_inbound_updates', { type: 'svcdelete' }),
      eds: await metric('pilot_inbound_updates', { type: 'eds' }),
    };
    writeConfig('updates', service('updates', 'foo', { name: 'http', port: 80 }));
    await metricBecomes('pilot_inbound_updates', (value) => value > before.svc, { type: 'svc' });
    await metricBecomes('pilot_inbound_updates', (value) => value > before.config, { type: 'config' });
    writeConfig('updates-pod', pod('updates-1', 'foo', 'updates', '10.1.0.1'));
    writeConfig(
      'updates-slice',
      `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: updates-abc
  namespace: foo
  labels:
    kubernetes.io/service-name: updates
addressType: IPv4
ports:
  - name: http
    port: 80
endpoints:
  - addresses: [10.1.0.1]
    targetRef: {kind: Pod, name: updates-1, namespace: foo}
`,
    );
    await metricBecomes('pilot_inbound_updates', (value) => value > before.eds, { type: 'eds' });
    removeConfig('updates');
    await metricBecomes('pilot_inbound_updates', (value) => value > before.svcdelete, { type: 'svcdelete' });
    removeConfig('updates-pod');
    removeConfig('updates-slice');
  });

  test('an EndpointSlice naming a pod not known yet: endpoint_no_pod, pilot_orch_endpoints_pending_pod, pilot_orch_endpoints_with_no_pods', async () => {
    const counted = await metric('pilot_orch_endpoints_with_no_pods');
    writeConfig('late', service('late', 'bar', { name: 'http', port: 80, targetPort: 8080 }));
    writeConfig(
      'late-slice',
      `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: late-abc
  namespace: bar
  labels:
    kubernetes.io/service-name: late
addressType: IPv4
ports:
  - name: http
    port: 8080
endpoints:
  - addresses: [10.2.0.1]
    targetRef: {kind: Pod, name: late-1, namespace: bar}
  - addresses: [10.2.0.2]
    targetRef: {kind: Pod, name: late-2, namespace: bar}
`,
    );
    expect(await metricBecomes('pilot_orch_endpoints_pending_pod', (value) => value === 2)).toBe(2);
    expect(await metricBecomes('endpoint_no_pod', (value) => value === 1)).toBe(1);
    expect(await metricBecomes('pilot_orch_endpoints_with_no_pods', (value) => value >= counted + 2)).toBeGreaterThanOrEqual(counted + 2);

    // The pods arrive: nothing waits any more (the counter keeps its count).
    writeConfig('late-pods', [pod('late-1', 'bar', 'late', '10.2.0.1'), pod('late-2', 'bar', 'late', '10.2.0.2')].join('---\n'));
    expect(await metricBecomes('pilot_orch_endpoints_pending_pod', (value) => value === 0)).toBe(0);
    expect(await metricBecomes('endpoint_no_pod', (value) => value === 0)).toBe(0);
    expect(await metric('pilot_orch_endpoints_with_no_pods')).toBeGreaterThanOrEqual(counted + 2);
  });
});

describe('the model', () => {
  test('pilot_destrule_subsets: two DestinationRules of one host and namespace define the same subset', async () => {
    const rule = (name: string, subsets: readonly string[]): string =>
      `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: ${name}
  namespace: foo
spec:
  host: reviews.foo.svc.cluster.local
  subsets:
${subsets.map((subset) => `    - name: ${subset}\n      labels: {version: ${subset}}\n`).join('')}`;
    writeConfig('dr-a', rule('reviews-a', ['v1', 'v2']));
    writeConfig('dr-b', rule('reviews-b', ['v2', 'v3']));
    expect(await metricBecomes('pilot_destrule_subsets', (value) => value === 1)).toBe(1);
    writeConfig('dr-b', rule('reviews-b', ['v3']));
    expect(await metricBecomes('pilot_destrule_subsets', (value) => value === 0)).toBe(0);
    removeConfig('dr-a');
    removeConfig('dr-b');
  });

  test('pilot_duplicate_proxy_clusters: a ServiceEntry names a host and port another Service has', async () => {
    const entry = (name: string): string =>
      serviceEntry(name, '  hosts: [db.example.com]\n  ports:\n    - {number: 5432, name: tcp, protocol: TCP}\n  resolution: DNS\n');
    writeConfig('se-db-1', entry('db-1'));
    writeConfig('se-db-2', entry('db-2'));
    expect(await metricBecomes('pilot_duplicate_proxy_clusters', (value) => value === 1)).toBe(1);
    removeConfig('se-db-2');
    expect(await metricBecomes('pilot_duplicate_proxy_clusters', (value) => value === 0)).toBe(0);
    removeConfig('se-db-1');
  });

  test('pilot_eds_no_instances: a Service whose selector picks no ready pod', async () => {
    const baseline = await metric('pilot_eds_no_instances');
    writeConfig('lonely', service('lonely', 'foo', { name: 'http', port: 80, targetPort: 8080 }));
    expect(await metricBecomes('pilot_eds_no_instances', (value) => value === baseline + 1)).toBe(baseline + 1);
    writeConfig('lonely-pod', pod('lonely-1', 'foo', 'lonely', '10.3.0.1'));
    writeConfig(
      'lonely-slice',
      `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: lonely-abc
  namespace: foo
  labels:
    kubernetes.io/service-name: lonely
addressType: IPv4
ports:
  - name: http
    port: 8080
endpoints:
  - addresses: [10.3.0.1]
    targetRef: {kind: Pod, name: lonely-1, namespace: foo}
`,
    );
    expect(await metricBecomes('pilot_eds_no_instances', (value) => value === baseline)).toBe(baseline);
  });
});

describe('the proxies', () => {
  test('pilot_no_ip: a sidecar whose name and address match no workload', async () => {
    const stream = await connectSidecar('ghost-1', 'foo', '10.9.9.9');
    expect(await metricBecomes('pilot_no_ip', (value) => value === 1)).toBe(1);
    stream.cancel();
    await settledFullPush();
    expect(await metricBecomes('pilot_no_ip', (value) => value === 0)).toBe(0);
  });

  test('pilot_endpoint_not_ready: a sidecar whose pod a Service selects is not ready', async () => {
    writeConfig('slow', service('slow', 'foo', { name: 'http', port: 80, targetPort: 8080 }));
    await podEvents('add', () => writeConfig('slow-pod', pod('slow-1', 'foo', 'slow', '10.4.0.1', false)));
    await settledFullPush();
    const stream = await connectSidecar('slow-1', 'foo', '10.4.0.1');
    expect(await metricBecomes('pilot_endpoint_not_ready', (value) => value === 1)).toBe(1);
    // Readiness moves endpoints only: the listeners are built again, and the proxy found ready, on the next full push.
    await podEvents('update', () => writeConfig('slow-pod', pod('slow-1', 'foo', 'slow', '10.4.0.1', true)));
    await settledFullPush();
    expect(await metricBecomes('pilot_endpoint_not_ready', (value) => value === 0)).toBe(0);
    stream.cancel();
  });

  test('pilot_conflict_inbound_listener: two Services send to one container port with different protocols', async () => {
    writeConfig('dual-web', service('dual', 'bar', { name: 'http', port: 80, targetPort: 8080 }));
    writeConfig('dual-raw', service('dual-raw', 'bar', { name: 'tcp', port: 9000, targetPort: 8080 }).replace('app: dual-raw', 'app: dual'));
    await podEvents('add', () => writeConfig('dual-pod', pod('dual-1', 'bar', 'dual', '10.5.0.1')));
    await settledFullPush();
    const stream = await connectSidecar('dual-1', 'bar', '10.5.0.1');
    expect(await metricBecomes('pilot_conflict_inbound_listener', (value) => value === 1)).toBe(1);
    removeConfig('dual-raw');
    expect(await metricBecomes('pilot_conflict_inbound_listener', (value) => value === 0)).toBe(0);
    stream.cancel();
  });

  test('pilot_conflict_outbound_listener_*: service ports an outbound listener cannot tell apart', async () => {
    // TCP over TCP: two entries on one address and port.
    const tcpEntry = (name: string, host: string): string =>
      serviceEntry(
        name,
        `  hosts: [${host}]\n  addresses: [240.0.0.9]\n  ports:\n    - {number: 7000, name: tcp, protocol: TCP}\n  resolution: STATIC\n  endpoints:\n    - address: 10.6.0.1\n`,
      );
    writeConfig('se-tcp-1', tcpEntry('tcp-1', 'one.tcp.example'));
    writeConfig('se-tcp-2', tcpEntry('tcp-2', 'two.tcp.example'));
    // TCP over HTTP: an entry without an address on a port HTTP services hold.
    writeConfig('web-7001', service('web', 'foo', { name: 'http', port: 7001, targetPort: 8080 }));
    writeConfig(
      'se-opaque',
      serviceEntry('opaque', '  hosts: [opaque.example]\n  ports:\n    - {number: 7001, name: tcp, protocol: TCP}\n  resolution: NONE\n'),
    );
    // HTTP over TCP: an HTTP Service whose cluster IP a TCP entry on the same port takes.
    writeConfig('api-7002', service('api', 'foo', { name: 'http', port: 7002, targetPort: 8080 }, '  clusterIP: 10.96.7.2\n'));
    writeConfig(
      'se-api-raw',
      serviceEntry(
        'api-raw',
        '  hosts: [api-raw.example]\n  addresses: [10.96.7.2]\n  ports:\n    - {number: 7002, name: tcp, protocol: TCP}\n  resolution: NONE\n',
      ),
    );
    await configAccepted(['ServiceEntry/foo/tcp-1', 'ServiceEntry/foo/tcp-2', 'ServiceEntry/foo/opaque', 'ServiceEntry/foo/api-raw']);
    await settledFullPush();
    const stream = await connectSidecar('client-1', 'foo', '10.6.9.1');
    expect(await metricBecomes('pilot_conflict_outbound_listener_tcp_over_current_tcp', (value) => value === 1)).toBe(1);
    expect(await metricBecomes('pilot_conflict_outbound_listener_tcp_over_current_http', (value) => value === 1)).toBe(1);
    expect(await metricBecomes('pilot_conflict_outbound_listener_http_over_current_tcp', (value) => value === 1)).toBe(1);

    for (const name of ['se-tcp-2', 'se-opaque', 'se-api-raw']) removeConfig(name);
    expect(await metricBecomes('pilot_conflict_outbound_listener_tcp_over_current_tcp', (value) => value === 0)).toBe(0);
    expect(await metricBecomes('pilot_conflict_outbound_listener_tcp_over_current_http', (value) => value === 0)).toBe(0);
    expect(await metricBecomes('pilot_conflict_outbound_listener_http_over_current_tcp', (value) => value === 0)).toBe(0);
    stream.cancel();
    for (const name of ['se-tcp-1', 'web-7001', 'api-7002']) removeConfig(name);
  });

  test('pilot_vservice_dup_domain: two hosts on one address and HTTP port make the same domain', async () => {
    const webEntry = (name: string, host: string): string =>
      serviceEntry(
        name,
        `  hosts: [${host}]\n  addresses: [240.0.0.10]\n  ports:\n    - {number: 7003, name: http, protocol: HTTP}\n  resolution: STATIC\n  endpoints:\n    - address: 10.7.0.1\n`,
      );
    writeConfig('se-web-1', webEntry('web-1', 'one.web.example'));
    writeConfig('se-web-2', webEntry('web-2', 'two.web.example'));
    await configAccepted(['ServiceEntry/foo/web-1', 'ServiceEntry/foo/web-2']);
    await settledFullPush();
    const stream = await connectSidecar('client-2', 'foo', '10.7.9.1', ['7003']);
    expect(await metricBecomes('pilot_vservice_dup_domain', (value) => value === 1)).toBe(1);
    removeConfig('se-web-2');
    expect(await metricBecomes('pilot_vservice_dup_domain', (value) => value === 0)).toBe(0);
    stream.cancel();
    removeConfig('se-web-1');
  });
});
