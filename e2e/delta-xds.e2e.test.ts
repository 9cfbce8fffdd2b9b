import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { dig } from '../testing/dig.js';
import { allocateAddresses } from '../xds/model/auto-allocation.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// MESH_DELTA_XDS=true: the agents bootstrap their data planes with DELTA_GRPC, the embedded data
// planes subscribe over DeltaAggregatedResources (through the agent's xDS proxy), traffic flows,
// and an endpoint change and a policy change reach them as delta pushes. Namespace foo only:
// httpbin and sleep with sidecars, and a Service `echo` whose one pod (unmeshed) appears later.
const BLOCK = 41;
const ECHO_POD = `127.${BLOCK}.1.30`;
const ECHO_SERVICE = `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: foo }
spec:
  selector: { app: echo }
  ports: [{ name: http, port: 8000, targetPort: 8080, protocol: TCP }]
`;
const ECHO_POD_YAML = `apiVersion: v1
kind: Pod
metadata: { name: echo-1, namespace: foo, labels: { app: echo } }
spec:
  serviceAccountName: echo
  containers: [{ name: echo, ports: [{ containerPort: 8080 }] }]
status:
  podIP: ${ECHO_POD}
`;
const DENY_SLEEP = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-sleep, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/foo/sa/sleep"] } }] }]
`;

// MESH_META_DNS_CAPTURE too: the agents ask for the name table on the data planes' delta streams.
const DNS_NAMES = `apiVersion: v1
kind: Service
metadata: { name: db, namespace: foo }
spec:
  clusterIP: 10.96.0.50
  selector: { app: db }
  ports: [{ name: tcp, port: 5432, protocol: TCP }]
---
apiVersion: v1
kind: Service
metadata: { name: echo-direct, namespace: foo }
spec:
  clusterIP: None
  selector: { app: echo }
  ports: [{ name: http, port: 8080, protocol: TCP }]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: payments, namespace: foo }
spec:
  hosts: [api.payments.example]
  addresses: [240.0.0.7]
  location: MESH_EXTERNAL
  resolution: STATIC
  ports: [{ name: https, number: 443, protocol: TLS }]
  endpoints: [{ address: 127.41.9.9 }]
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: warehouse, namespace: foo }
spec:
  hosts: [db.warehouse.example]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{ name: tcp-pg, number: 5432, protocol: TCP }]
  endpoints: [{ address: 127.41.9.10 }]
`;

let workDir: string;
let mesh: LocalMesh;
let echo: Server;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'delta-xds-e2e-'));
  const samples = join(workDir, 'samples');
  mkdirSync(samples);
  for (const file of ['namespaces.yaml', 'workloads-foo.yaml']) cpSync(join(PROJECT_ROOT, 'deploy/samples/config', file), join(samples, file));
  writeFileSync(join(samples, 'echo-service.yaml'), ECHO_SERVICE);
  writeFileSync(join(samples, 'dns-names.yaml'), DNS_NAMES);
  // The echo pod's app, ready before the pod exists in the mesh.
  echo = createServer((_req, res) => res.end('echo-1\n'));
  await new Promise<void>((resolve) => echo.listen(8080, ECHO_POD, resolve));
  mesh = await startLocalMesh({
    workDir: join(workDir, 'mesh'),
    samples,
    addressBlock: BLOCK,
    agentEnv: { MESH_DELTA_XDS: 'true', MESH_META_DNS_CAPTURE: 'true', MESH_META_DNS_AUTO_ALLOCATE: 'true' },
    proxyConfig: { terminationDrainDuration: '1ms' },
  });
  await mesh.waitReady(30_000);
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  echo?.closeAllConnections();
  await new Promise((resolve) => echo?.close(resolve));
  rmSync(workDir, { recursive: true, force: true });
});

const via = (url: string) => curl(['-sS', '-x', mesh.proxyOf('foo'), url]);
/** The sleep pod's agent answers DNS on its own address (every pod of the local mesh shares the host's loopback). */
const sleepDns = () => ({ host: new URL(mesh.proxyOf('foo')).hostname, port: 15053 });

describe('delta xDS end to end (MESH_DELTA_XDS=true)', () => {
  test('the data planes subscribe over delta streams and carry mesh traffic', async () => {
    const adsz = (await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/adsz`)).json()) as {
      clients: { proxy: string; stream: string; watches: Record<string, { wildcard: boolean; names: string[] }> }[];
    };
    const sleep = adsz.clients.find((client) => client.proxy === 'sleep-foo.foo');
    expect(sleep?.stream).toBe('delta');
    expect(sleep?.watches['cds']?.wildcard).toBe(true);
    expect(sleep?.watches['eds']?.names).toEqual(
      expect.arrayContaining(['outbound|8000||httpbin.foo.svc.cluster.local', 'outbound|8000||echo.foo.svc.cluster.local']),
    );
    expect(adsz.clients.map((client) => client.stream)).toEqual(['delta', 'delta']);
    const { code, body } = await via('http://httpbin.foo:8000/headers');
    expect(code).toBe('200');
    expect(body).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
  });

  test('the agent answers DNS from the name table it asked for on the delta stream; the data plane never sees it', async () => {
    const adsz = (await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/adsz`)).json()) as {
      clients: { proxy: string; watches: Record<string, unknown> }[];
    };
    expect(Object.keys(adsz.clients.find((client) => client.proxy === 'sleep-foo.foo')?.watches ?? {})).toContain('NameTable');
    const names = await waitFor(
      async () => {
        const result = await dig(sleepDns(), 'db.foo.svc.cluster.local');
        return result.answers.length > 0 ? result : undefined;
      },
      { timeoutMs: 10_000, description: 'the name table at the agent' },
    );
    expect(names.flags).toContain('aa');
    expect(names.answers).toEqual([{ name: 'db.foo.svc.cluster.local.', ttl: 30, type: 'A', data: '10.96.0.50' }]);
    expect((await dig(sleepDns(), 'db', 'A', { tcp: true })).answers.map((answer) => answer.data)).toEqual(['10.96.0.50']);
    expect((await dig(sleepDns(), 'api.payments.example')).answers.map((answer) => answer.data)).toEqual(['240.0.0.7']);
    // MESH_META_DNS_AUTO_ALLOCATE: an entry without addresses answers with the one allocated to it.
    const allocated = allocateAddresses([{ namespace: 'foo', hostname: 'db.warehouse.example' }]).get('db.warehouse.example')?.ipv4;
    expect(allocated).toMatch(/^240\.240\./);
    expect((await dig(sleepDns(), 'db.warehouse.example')).answers.map((answer) => answer.data)).toEqual([allocated]);
    // No resolv.conf in the local mesh's pods: a name the mesh does not know finds no upstream.
    expect((await dig(sleepDns(), 'www.example.com')).status).toBe('SERVFAIL');
    // Traffic still flows: the data plane got no response of a type it does not know.
    expect((await via('http://httpbin.foo:8000/ip')).code).toBe('200');
  });

  test('an endpoint change: the echo pod appears and the sidecar sends to it', async () => {
    expect((await via('http://echo.foo:8000/')).code).toBe('503');
    // The headless Service has no ready address yet: the table does not know it.
    expect((await dig(sleepDns(), 'echo-direct.foo.svc.cluster.local')).flags).not.toContain('aa');
    await mesh.apply('echo-pod.yaml', ECHO_POD_YAML);
    const answered = await waitFor(
      async () => {
        const result = await via('http://echo.foo:8000/');
        return result.code === '200' ? result : undefined;
      },
      { timeoutMs: 10_000, description: 'echo reachable through the sidecar' },
    );
    expect(answered.body).toBe('echo-1\n');
    // The headless Service's name follows its endpoints: the pod's address, answered by the agent.
    const direct = await waitFor(
      async () => {
        const result = await dig(sleepDns(), 'echo-direct.foo.svc.cluster.local');
        return result.answers.length > 0 ? result : undefined;
      },
      { timeoutMs: 10_000, description: 'the headless name at the agent' },
    );
    expect(direct.answers.map((answer) => answer.data)).toEqual([ECHO_POD]);
  });

  test('a policy change: a DENY for sleep’s identity at httpbin, then its removal', async () => {
    await mesh.apply('deny-sleep.yaml', DENY_SLEEP);
    await waitFor(async () => (await via('http://httpbin.foo:8000/ip')).code === '403', { timeoutMs: 10_000, description: 'the DENY in force' });
    await mesh.remove('deny-sleep.yaml');
    await waitFor(async () => (await via('http://httpbin.foo:8000/ip')).code === '200', { timeoutMs: 10_000, description: 'the DENY gone' });
  });
});
