import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { startApiServerDouble, type ApiRequestRecord, type ApiServerDouble } from '../../apiserver-double/index.js';
import { signedCertificate } from '../../testing/openssl.js';
import { collect, startBin, type BinResult } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { CLUSTER_TYPE, loadEnvoyProtos } from '../../xds/index.js';
import { newAdsTestClient, nodeFor, type AdsTestClient, type AdsTestStream } from '../../xds/testing/test-support.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';
import { runBin } from '../../testing/run-bin.js';

// The built daemon in Kubernetes mode against the API server double, its pod `meshd-a` registered
// with its xDS ports resolved to the process (15012 TLS, 15010 plain text), two proxies of
// foo/sleep connected over plain text with their tokens (XDS_AUTH_PLAINTEXT), and the built
// meshctl asking the daemon over xDS through port-forwards.
let kube: ApiServerDouble;
let daemon: ChildProcess;
let exited: Promise<unknown>;
let workDir: string;
let kubeconfig: string;
let admin: Server;
let ads: AdsTestClient;
const streams: AdsTestStream[] = [];
const requests: ApiRequestRecord[] = [];
const ports = { grpc: 0, secure: 0, http: 0, admin: 0, closed: 0 };

function podResolver(namespace: string, pod: string, port: number): { host: string; port: number } | undefined {
  const byPod: Record<string, Record<number, number>> = {
    'mesh-system/meshd-a': { 15012: ports.secure, 15010: ports.grpc },
    'mesh-system/meshd-b': { 15012: ports.closed },
    'foo/sleep-1': { 15000: ports.admin },
  };
  const mapped = byPod[`${namespace}/${pod}`]?.[port];
  return mapped === undefined ? undefined : { host: '127.0.0.1', port: mapped };
}

async function runningPod(namespace: string, name: string, labels: Record<string, string>, serviceAccountName: string): Promise<void> {
  const core = kube.kubeConfig().makeApiClient(CoreV1Api);
  const body: V1Pod = { metadata: { name, namespace, labels }, spec: { serviceAccountName, nodeName: 'local', containers: [{ name: 'main', image: 'main' }] } };
  const created = await core.createNamespacedPod({ namespace, body });
  await core.replaceNamespacedPodStatus({ name, namespace, body: { ...created, status: { phase: 'Running', podIP: '127.0.0.1' } } });
}

/** A proxy of foo/sleep over plain text with its own token, CDS received and ACKed. */
async function connectProxy(pod: string, meshVersion: string): Promise<void> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${kube.issueToken({ namespace: 'foo', serviceAccount: 'sleep', audiences: ['mesh-ca'] })}`);
  const stream = ads.sotw(metadata);
  streams.push(stream);
  stream.send({ node: nodeFor(pod, 'foo', { SERVICE_ACCOUNT: 'sleep', MESH_VERSION: meshVersion }), type_url: CLUSTER_TYPE, resource_names: [] });
  const cds = await stream.next(10_000);
  stream.send({ type_url: CLUSTER_TYPE, version_info: cds.version_info, response_nonce: cds.nonce, resource_names: [] });
}

const meshctl = (...args: string[]): Promise<BinResult> => runMeshctlInProcess(['-c', kubeconfig, ...args]);

beforeAll(async () => {
  [ports.grpc, ports.secure, ports.http, ports.admin, ports.closed] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0, podResolver, onRequest: (record) => requests.push(record) });
  const kubeConfig = kube.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name } } });
  for (const crd of buildCrdManifests()) await kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({ body: crd as never });
  await core.createNamespacedServiceAccount({ namespace: 'mesh-system', body: { metadata: { name: 'default' } } });
  await core.createNamespacedServiceAccount({ namespace: 'foo', body: { metadata: { name: 'sleep' } } });
  await runningPod('mesh-system', 'meshd-a', { app: 'meshd' }, 'meshd');
  await runningPod('foo', 'sleep-1', { app: 'sleep' }, 'sleep');

  workDir = mkdtempSync(join(tmpdir(), 'meshctl-xds-'));
  kubeconfig = join(workDir, 'kubeconfig');
  await kube.writeKubeconfig(kubeconfig);
  daemon = startBin(
    'pilot-discovery',
    [
      'discovery',
      '--orchconfig',
      kubeconfig,
      '--grpcAddr',
      `127.0.0.1:${ports.grpc}`,
      '--secureGRPCAddr',
      `127.0.0.1:${ports.secure}`,
      '--httpAddr',
      `127.0.0.1:${ports.http}`,
      '--monitoringAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--ctrlz_port',
      '0',
    ],
    { POD_NAME: 'meshd-a', XDS_AUTH_PLAINTEXT: 'true', PILOT_DEBOUNCE_AFTER: '50ms' },
    workDir,
  );
  exited = collect(daemon, 120_000);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    description: 'the daemon to be ready',
  });

  // sleep-1's proxy admin API answers its config dump as the daemon last sent it.
  admin = createServer((req, res) => {
    if (req.url?.startsWith('/config_dump') !== true) return void res.writeHead(404).end();
    void fetch(`http://127.0.0.1:${ports.http}/debug/config_dump?proxyID=sleep-1.foo`).then(async (answer) =>
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
    );
  });
  await new Promise<void>((resolve) => admin.listen(ports.admin, '127.0.0.1', resolve));
  ads = newAdsTestClient(loadEnvoyProtos(), ports.grpc);
  await connectProxy('sleep-1', '1.2.0');
  await connectProxy('sleep-2', '1.2.0');
}, 60_000);

afterAll(async () => {
  for (const stream of streams) stream.cancel();
  ads?.close();
  if (daemon?.exitCode === null) daemon.kill('SIGTERM');
  await exited?.catch(() => undefined);
  await new Promise<void>((resolve) => (admin ? admin.close(() => resolve()) : resolve()));
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('meshctl x over xDS against the daemon', () => {
  test('x ps: every proxy with its per-type status, the answering daemon from its identifier, and the proxy version; the token came from a TokenRequest', async () => {
    requests.length = 0;
    const result = await meshctl('x', 'ps');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]?.split(/\s+/)).toEqual(['NAME', 'CLUSTER', 'CDS', 'LDS', 'EDS', 'RDS', 'ECDS', 'MESHD', 'VERSION']);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/))).toEqual([
      ['sleep-1.foo', 'SYNCED', 'NOT SENT', 'NOT SENT', 'NOT SENT', 'IGNORED', 'meshd-a', '1.2.0'],
      ['sleep-2.foo', 'SYNCED', 'NOT SENT', 'NOT SENT', 'NOT SENT', 'IGNORED', 'meshd-a', '1.2.0'],
    ]);
    expect(requests).toContainEqual(expect.objectContaining({ verb: 'create', resource: 'serviceaccounts/token', namespace: 'mesh-system', name: 'default' }));
    expect(requests).toContainEqual(expect.objectContaining({ resource: 'pods/portforward', namespace: 'mesh-system', name: 'meshd-a' }));
  });

  test("x ps <pod>: the config the daemon sent (over mesh.io/debug) against the pod's own dump", async () => {
    const result = await meshctl('x', 'ps', 'sleep-1.foo');
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('Clusters Match\nListeners Match\nRoutes Match\n');
  });

  test('x version: the client, the daemon from its identifier, the proxies grouped by version (short and -o json)', async () => {
    const short = await meshctl('x', 'version');
    expect(short.code).toBe(0);
    const [client, controlPlane, dataPlane] = short.stdout.trimEnd().split('\n');
    expect(client).toMatch(/^client version: \S+$/);
    expect(controlPlane).toBe(`control plane version: ${client?.slice('client version: '.length)}`);
    expect(dataPlane).toBe('data plane version: 1.2.0 (2 proxies)');
    const json = JSON.parse((await meshctl('x', 'version', '-o', 'json')).stdout) as {
      meshVersion: { ID: string; Component: string }[];
      dataPlaneVersion: { ID: string; MeshVersion: string }[];
    };
    expect(json.meshVersion).toEqual([expect.objectContaining({ Component: 'meshd', ID: 'meshd-a' })]);
    expect(json.dataPlaneVersion).toEqual([
      { ID: 'sleep-1.foo', MeshVersion: '1.2.0' },
      { ID: 'sleep-2.foo', MeshVersion: '1.2.0' },
    ]);
  });

  test('x internal-debug: one view of the first daemon, --all as a map by daemon id, an unknown type with the list of known ones', async () => {
    const syncz = JSON.parse((await meshctl('x', 'internal-debug', 'syncz')).stdout) as { proxy: string }[];
    expect(syncz.map((entry) => entry.proxy).sort()).toEqual(['sleep-1.foo', 'sleep-2.foo']);
    const all = JSON.parse((await meshctl('x', 'internal-debug', '--all', 'adsz')).stdout) as Record<string, { totalClients: number }>;
    expect(Object.keys(all)).toEqual(['meshd-a']);
    expect(all['meshd-a']?.totalClients).toBe(2);
    const bad = await meshctl('x', 'internal-debug', 'secrets');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error: according to below command list, please check all supported internal debug commands\nsyncz\nadsz\npush_status');
    const noProxy = await meshctl('x', 'internal-debug', 'config_dump');
    expect(noProxy.code).toBe(1);
    expect(noProxy.stderr).toContain('e.g. config_dump?proxyID=<pod>.<namespace>');
  });

  test("x internal-debug <type> <pod>: the pod's service account token reads its own namespace's dumps only", async () => {
    const own = await meshctl('x', 'internal-debug', 'config_dump?proxyID=sleep-1.foo', 'sleep-1.foo');
    expect(own.stderr).toBe('');
    expect(JSON.parse(own.stdout)).toHaveProperty('configs');
    const other = await meshctl('x', 'internal-debug', 'adsz', 'sleep-1.foo');
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('the debug info is not available for the current identity');
  });

  test('--xds-address dials the daemon directly: TLS on the secure port, --plaintext on the plain one', async () => {
    const tls = await meshctl('x', 'ps', '--xds-address', `127.0.0.1:${ports.secure}`);
    expect(tls.stdout).toContain('sleep-1.foo');
    expect(tls.stderr).toBe('');
    const plain = await meshctl('x', 'internal-debug', 'syncz', '--plaintext', '--xds-address', `127.0.0.1:${ports.grpc}`);
    expect(plain.stderr).toBe('');
    expect(plain.stdout).toContain('"sleep-2.foo"');
    // Keyed by the identifier the daemon puts in its debug responses, not by the address dialled.
    const all = JSON.parse((await meshctl('x', 'internal-debug', '--all', 'push_status', '--xds-address', `127.0.0.1:${ports.secure}`)).stdout) as Record<
      string,
      unknown
    >;
    expect(Object.keys(all)).toEqual(['meshd-a']);
    const mixed = await meshctl('x', 'ps', '--plaintext', '--xds-address', `127.0.0.1:${ports.secure}`, '--timeout', '2s');
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain(`meshd 127.0.0.1:${ports.secure} did not answer`);
    const usage = await meshctl('x', 'ps', '--plaintext', '--cert-dir', workDir);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toContain('--plaintext and --cert-dir cannot be used together');
  });

  test('the MESHCONFIG file gives the XDS flags their defaults; the environment wins over it, a flag over both', async () => {
    const file = join(workDir, 'meshctl-config.yaml');
    writeFileSync(file, `xds-address: 127.0.0.1:${ports.grpc}\nplaintext: true\n`);
    const run = (env: Record<string, string>, ...args: string[]) =>
      runMeshctlInProcess(['-c', kubeconfig, 'x', 'internal-debug', 'syncz', ...args], { MESHCONFIG: file, ...env });
    const fromFile = await run({});
    expect(fromFile.stderr).toBe('');
    expect(fromFile.stdout).toContain('"sleep-2.foo"');
    // The environment's TLS port with the file's --plaintext: the daemon does not answer, which shows the environment won.
    const fromEnvironment = await run({ MESHCTL_XDS_ADDRESS: `127.0.0.1:${ports.secure}` }, '--timeout', '2s');
    expect(fromEnvironment.stderr).toContain(`meshd 127.0.0.1:${ports.secure} did not answer`);
    expect((await run({ MESHCTL_XDS_ADDRESS: `127.0.0.1:${ports.secure}` }, '--plaintext=false')).stdout).toContain('"sleep-2.foo"');
    writeFileSync(file, 'xds-port: seventy\n');
    const bad = await runBin('meshctl', ['x', 'internal-debug', 'syncz'], { env: { MESHCONFIG: file } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`MESHCONFIG file ${file}: xds-port: expected a port from 1 to 65535, got "seventy"`);
  });

  test('--cert-dir: a client certificate of the mesh CA and no token, the daemon verified against root-cert.pem under --authority', async () => {
    const secret = kube.objects('v1', 'Secret', 'mesh-system').find((object) => object.metadata?.name === 'mesh-ca-secret') as
      { data?: Record<string, string> } | undefined;
    const pem = (key: string): string => Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');
    const certDir = join(workDir, 'cert-dir');
    mkdirSync(certDir, { recursive: true });
    for (const name of ['ca-key.pem', 'ca-cert.pem', 'root-cert.pem']) writeFileSync(join(certDir, name), pem(name));
    const client = await signedCertificate(certDir, 'meshctl', 'URI:spiffe://cluster.local/ns/mesh-system/sa/default', {
      keyFile: join(certDir, 'ca-key.pem'),
      certFile: join(certDir, 'ca-cert.pem'),
    });
    copyFileSync(client.certFile, join(certDir, 'cert-chain.pem'));
    copyFileSync(client.keyFile, join(certDir, 'key.pem'));
    requests.length = 0;
    const good = await meshctl('x', 'ps', '--cert-dir', certDir);
    expect(good.stderr).toBe('');
    expect(good.stdout).toContain('sleep-2.foo');
    expect(requests.filter((record) => record.resource === 'serviceaccounts/token')).toEqual([]);
    const wrongName = await meshctl('x', 'ps', '--cert-dir', certDir, '--authority', 'meshd.elsewhere.svc');
    expect(wrongName.code).toBe(1);
    expect(wrongName.stderr).toMatch(/^meshd meshd-a did not answer: .+/);
    const unverified = await meshctl('x', 'ps', '--cert-dir', certDir, '--authority', 'meshd.elsewhere.svc', '--insecure');
    expect(unverified.stdout).toContain('sleep-2.foo');
  });

  test("an unreachable daemon pod is named while the other's proxies are printed", async () => {
    await runningPod('mesh-system', 'meshd-b', { app: 'meshd' }, 'meshd');
    try {
      const result = await meshctl('x', 'ps', '--timeout', '5s');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('sleep-1.foo');
      expect(result.stderr).toMatch(/^meshd meshd-b did not answer: .+/);
    } finally {
      await kube.kubeConfig().makeApiClient(CoreV1Api).deleteNamespacedPod({ name: 'meshd-b', namespace: 'mesh-system' });
    }
  });
});
