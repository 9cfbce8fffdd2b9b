import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { envoyConfigDump } from '../../dataplane/admin-config-dump.js';
import { clustersJson } from '../../dataplane/admin-clusters.js';
import { newEnvoyLoggers } from '../../dataplane/admin-loggers.js';
import { newAdminServer, type AdminServer } from '../../dataplane/admin-server.js';
import { newDataPlaneStats } from '../../dataplane/data-plane-stats.js';
import { newConfigState } from '../../dataplane/config-state.js';
import { applyProxyConfig, generateProxyConfig } from '../../dataplane/testing/simulation-support.js';
import { expectGoldenText } from '../../testing/golden.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';
import { loadEnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { buildPushContext } from '../../xds/model/index.js';
import { loadCase } from '../../xds/generators/testing/test-cases.js';
import { newMeshGenerators } from '../../xds/mesh-generators.js';

// meshctl proxy-config over a recorded config dump (-f) and over a live proxy admin API reached by
// a port-forward through the API server double. The dump is what the embedded data plane's admin
// API serves for the config the daemon generates for bookinfo's productpage (a DestinationRule
// with subsets, a VirtualService splitting by weight), with a workload certificate over SDS.
const TESTDATA = join(PROJECT_ROOT, 'cli', 'testdata', 'proxy-config');
const CASE = join(PROJECT_ROOT, 'xds', 'generators', 'sidecar', 'testdata', 'rds');
const RECORDED = new Date('2026-11-24T12:00:00Z');
let dir: string;
let dumpFile: string;
let clustersFile: string;
let kube: ApiServerDouble;
let admin: AdminServer;

const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });
/** The built program, for what only a process shows (the request log it writes on its own stderr). */
const builtMeshctl = (...args: string[]) => runBin('meshctl', ['-c', join(dir, 'kubeconfig'), ...args], { env: { HOME: '/nonexistent' }, timeoutMs: 30_000 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-pc-'));
  const protos = loadEnvoyProtos();
  const { model, proxy } = loadCase(CASE, 'weighted-subsets.in.yaml');
  const state = newConfigState();
  applyProxyConfig(state, generateProxyConfig(protos, newMeshGenerators(), proxy, buildPushContext(model)), '2026-11-24T12:00:00Z/7');
  const secrets = {
    certificates: new Map([
      [
        'default',
        {
          certificateChain: readFileSync(join(TESTDATA, 'workload-chain.pem'), 'utf8'),
          privateKey: '-----BEGIN PRIVATE KEY-----\nnot shown\n-----END PRIVATE KEY-----\n',
        },
      ],
    ]),
    trustedCas: new Map([['ROOTCA', readFileSync(join(TESTDATA, 'root-cert.pem'), 'utf8')]]),
  };
  const bootstrap = {
    node: { id: proxy.id, cluster: 'productpage.bookinfo' },
    admin: { address: { socket_address: { address: '127.0.0.1', port_value: 15000 } } },
  };
  const updatedAt = new Map([['bootstrap', RECORDED], ...[...state.current().versions.keys()].map((typeUrl): [string, Date] => [typeUrl, RECORDED])]);
  const dump = envoyConfigDump({ bootstrap, snapshot: state.current(), secrets, updatedAt, rejections: new Map() }, { includeEds: false });
  dumpFile = join(TESTDATA, 'productpage.config_dump.json');
  clustersFile = join(TESTDATA, 'productpage.clusters.json');
  // The recordings are golden files: what the data plane's admin API serves for this config.
  expectGoldenText(dumpFile, `${JSON.stringify(dump, null, 2)}\n`);
  expectGoldenText(clustersFile, `${JSON.stringify(clustersJson(state.current()), null, 2)}\n`);

  admin = newAdminServer({
    state,
    stats: newDataPlaneStats(),
    isReady: () => true,
    addresses: () => new Map(),
    bootstrap,
    secrets: () => secrets,
    loggers: newEnvoyLoggers('warning', () => undefined),
  });
  const adminPort = await admin.listen('127.0.0.1', 0);
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    podResolver: (_ns, _pod, port) => (port === 15000 ? { host: '127.0.0.1', port: adminPort } : undefined),
  });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const core = kube.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'bookinfo' } } });
  const pod = await core.createNamespacedPod({
    namespace: 'bookinfo',
    body: { metadata: { name: 'productpage-1', labels: { app: 'productpage' } }, spec: { containers: [{ name: 'app', image: 'productpage' }] } },
  });
  await core.replaceNamespacedPodStatus({ name: 'productpage-1', namespace: 'bookinfo', body: { ...pod, status: { phase: 'Running', podIP: '127.0.0.1' } } });
}, 60_000);

afterAll(async () => {
  await admin?.close();
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl proxy-config over a recorded config dump (-f)', () => {
  test.each([
    ['cluster', ['cluster']],
    ['cluster-filtered', ['cluster', '--fqdn', 'reviews', '--port', '9080', '--direction', 'outbound']],
    ['listener', ['listener']],
    ['listener-types', ['listener', '--verbose=false']],
    ['route', ['route']],
    ['route-named', ['route', '--name', '9080', '--verbose=false']],
    ['secret', ['secret']],
    ['all', ['all']],
  ])('%s (golden)', async (name, args) => {
    const result = await meshctl('proxy-config', ...args, '-f', dumpFile);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectGoldenText(join(TESTDATA, `${name}.golden.txt`), result.stdout);
  });

  test('the DestinationRule and the VirtualService behind clusters and routes are named', async () => {
    const clusters = (await meshctl('pc', 'c', '-f', dumpFile, '--subset', 'v1')).stdout;
    expect(clusters).toMatch(/reviews\.bookinfo\.svc\.cluster\.local +9080 +v1 +outbound +EDS +reviews\.bookinfo\n/);
    const routes = (await meshctl('pc', 'r', '-f', dumpFile)).stdout;
    expect(routes).toMatch(/\n9080 +reviews\.bookinfo\.svc\.cluster\.local, 10\.96\.0\.30 +\/api\/v2\* +reviews\.bookinfo\n/);
  });

  test('endpoint reads a recorded /clusters?format=json', async () => {
    const result = await meshctl('pc', 'endpoint', '-f', clustersFile);
    expect(result.code).toBe(0);
    expectGoldenText(join(TESTDATA, 'endpoint.golden.txt'), result.stdout);
  });

  test('-o json and -o yaml print the selected config; bootstrap defaults to JSON', async () => {
    const json = JSON.parse((await meshctl('pc', 'cluster', '-f', dumpFile, '--fqdn', 'ratings', '-o', 'json')).stdout) as { name: string }[];
    expect(json.map((c) => c.name)).toEqual(['outbound|9090||ratings.bookinfo.svc.cluster.local']);
    expect((await meshctl('pc', 'route', '-f', dumpFile, '--name', '9080', '-o', 'yaml')).stdout).toMatch(
      /^- "@type": type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration\n {2}name: "9080"\n {2}virtual_hosts:/,
    );
    const bootstrap = JSON.parse((await meshctl('pc', 'bootstrap', '-f', dumpFile)).stdout) as { bootstrap: { node: { id: string } } };
    expect(bootstrap.bootstrap.node.id).toBe('productpage-1.bookinfo');
    const secrets = (await meshctl('pc', 'secret', '-f', dumpFile, '-o', 'json')).stdout;
    expect(secrets).toContain('"inline_bytes": "W3JlZGFjdGVkXQ=="');
    expect(secrets).not.toContain('not shown');
  });

  test('bad input: neither or both of pod and --file, a file that is not a dump, a bad --output', async () => {
    expect(await meshctl('pc', 'cluster')).toMatchObject({ code: 64, stderr: 'Error: cluster requires pod name or --file parameter\n' });
    expect(await meshctl('pc', 'cluster', 'productpage-1', '-f', dumpFile)).toMatchObject({
      code: 64,
      stderr: 'Error: cluster requires pod name or --file parameter\n',
    });
    writeFileSync(join(dir, 'not-a-dump.json'), '{"hello": 1}');
    const notDump = await meshctl('pc', 'listener', '-f', join(dir, 'not-a-dump.json'));
    expect(notDump.code).toBe(65);
    expect(notDump.stderr).toContain('not a config dump: no "configs" array');
    expect((await meshctl('pc', 'cluster', '-f', dumpFile, '-o', 'xml')).code).toBe(64);
  });
});

describe('meshctl proxy-config against a live proxy through a port-forward', () => {
  // Ten meshctl processes, the live one and the file one of each table side by side: about 1.5 s
  // each on an idle machine, three times that with two busy processes beside the suite.
  test('the pod’s tables equal the recorded dump’s', async () => {
    for (const kind of ['cluster', 'listener', 'route', 'secret']) {
      const [live, recorded] = await Promise.all([meshctl('pc', kind, 'productpage-1.bookinfo'), meshctl('pc', kind, '-f', dumpFile)]);
      expect(live.stderr).toBe('');
      expect(live.stdout).toBe(recorded.stdout);
    }
    const [live, recorded] = await Promise.all([
      meshctl('pc', 'endpoint', 'pod/productpage-1', '-n', 'bookinfo'),
      meshctl('pc', 'endpoint', '-f', clustersFile),
    ]);
    expect(live.stdout).toBe(recorded.stdout);
  }, 60_000);

  test('--vklog 6 logs each API request and its status on stderr, as kubectl -v=6 does', async () => {
    const logged = await builtMeshctl('--vklog', '6', 'pc', 'cluster', 'productpage-1.bookinfo');
    expect(logged.code).toBe(0);
    expect(logged.stderr).toMatch(/^GET https?:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/bookinfo\/pods\/productpage-1\nResponse Status: 200\n/);
    expect((await builtMeshctl('--vklog', '5', 'pc', 'cluster', 'productpage-1.bookinfo')).stderr).toBe('');
  });

  test('a missing pod, and a target that is not a pod, are named', async () => {
    expect(await meshctl('pc', 'cluster', 'nope', '-n', 'bookinfo')).toMatchObject({
      code: 1,
      stderr: 'Error: unable to retrieve Pod: pods "nope" not found\n',
    });
    expect(await meshctl('pc', 'cluster', 'serviceaccount/sleep', '-n', 'bookinfo')).toMatchObject({
      code: 64,
      stderr: 'Error: "serviceaccount/sleep" does not refer to a pod\n',
    });
  });

  test('log reads and sets the proxy’s logger levels, refusing unknown loggers and levels', async () => {
    const read = await meshctl('pc', 'log', 'productpage-1.bookinfo');
    expect(read.stdout).toMatch(/^active loggers:\n {2}admin: warning\n/);
    const set = await meshctl('pc', 'log', 'productpage-1.bookinfo', '--level', 'rbac:debug,jwt=info');
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('  rbac: debug\n');
    expect(set.stdout).toContain('  jwt: info\n');
    expect(await meshctl('pc', 'log', 'productpage-1.bookinfo', '--level', 'nosuch:debug')).toMatchObject({
      code: 64,
      stderr: 'Error: unrecognized logger name: nosuch\n',
    });
    expect(await meshctl('pc', 'log', 'productpage-1.bookinfo', '--level', 'loud')).toMatchObject({
      code: 64,
      stderr: 'Error: unrecognized logging level: loud\n',
    });
    const reset = await meshctl('pc', 'log', '-l', 'app=productpage', '-n', 'bookinfo', '-r');
    expect(reset.stdout).toContain('  rbac: warning\n');
  });
});
