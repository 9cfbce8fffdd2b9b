import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runBin, type BinResult } from '../testing/run-bin.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// `meshctl bug-report` against the local mesh in Kubernetes mode (the API server double, the built
// daemon and agents): the archive extracted with the real tar, its tree, what it must never hold.
let mesh: LocalMesh;
let workDir: string;
let runs = 0;

const SECRET_VALUE = 's3cr3t-bug-report-value';
const PRIVATE_KEY = '-----BEGIN PRIVATE KEY-----\nMIIBbugreportprobe\n-----END PRIVATE KEY-----\n';
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const PROBE_SECRET = `apiVersion: v1
kind: Secret
metadata: { name: bug-report-probe, namespace: foo }
type: Opaque
stringData:
  password: ${SECRET_VALUE}
  tls.key: ${JSON.stringify(PRIVATE_KEY)}
`;

interface Run {
  result: BinResult;
  cwd: string;
}

/** Runs the built meshctl in a fresh folder of its own. */
async function bugReport(args: readonly string[]): Promise<Run> {
  const cwd = join(workDir, `run-${++runs}`);
  mkdirSync(cwd, { recursive: true });
  const result = await runBin('meshctl', ['bug-report', ...args], { env: { KUBECONFIG: mesh.kubeconfigPath ?? '' }, cwd, timeoutMs: 60_000 });
  return { result, cwd };
}

/** The archive extracted with the real tar; its files by path under `bug-report/`. */
function extract(archive: string): { root: string; files: string[]; read(path: string): string } {
  const into = mkdtempSync(join(workDir, 'extract-'));
  execFileSync('tar', ['xzf', archive, '-C', into]);
  const root = join(into, 'bug-report');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((path) => statSync(join(root, path)).isFile()).sort();
  return { root, files, read: (path) => readFileSync(join(root, path), 'utf8') };
}

/** Every file holding `needle`, by path. */
function filesHolding(tree: ReturnType<typeof extract>, needle: string): string[] {
  return tree.files.filter((path) => tree.read(path).includes(needle));
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'bug-report-e2e-'));
  mesh = await startLocalMesh({ workDir, orchestrator: 'kubernetes', addressBlock: 63 });
  await mesh.waitReady(30_000);
  await mesh.apply('probe-secret.yaml', PROBE_SECRET);
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('meshctl bug-report', () => {
  let full: ReturnType<typeof extract>;

  test('the archive in the current folder: versions, cluster state, the daemon and every proxy; critical errors ranked', async () => {
    const { result, cwd } = await bugReport(['--critical-errs', '*discovery service ready*,*xDS proxy listening*', '--ignore-errs', '*xDS proxy*']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const archive = join(cwd, 'bug-report.tar.gz');
    expect(result.stdout).toContain(`Creating an archive at ${archive}.\n`);
    expect(result.stdout).toMatch(/^Done\.$/m);
    expect(result.stdout).toContain('Gathered proxy foo/httpbin-foo');
    full = extract(archive);

    expect(full.read('versions')).toMatch(/^client version: .*\nmeshd-local version: .*\n(data plane version: .*\n){5}$/);
    expect(full.read('cluster/k8s-resources/foo/pods.yaml')).toContain('name: httpbin-foo');
    expect(full.read('cluster/k8s-resources/mutatingwebhookconfigurations.yaml')).toContain('mesh-sidecar-injector');
    expect(full.files).toEqual(
      expect.arrayContaining([
        'cluster/crs/foo/peerauthentications.yaml',
        'cluster/events/foo.yaml',
        'cluster/k8s-resources/foo/endpointslices.yaml',
        'cluster/k8s-resources/mesh-system/configmaps.yaml',
      ]),
    );
    expect(full.read('cluster/secrets/foo.yaml')).toContain('- name: bug-report-probe\n  namespace: foo\n  type: Opaque\n');
    const context = full.read('cluster/cluster-context');
    expect(context).toMatch(/^context: .+\ncluster: .+\nserver: http:\/\/127\.0\.0\.1:\d+\n/);
    expect(context).not.toMatch(/token|client-key|password/i);
    expect(full.read('cluster/version')).toContain('gitVersion: v1.35.0');

    const daemon = 'meshd/mesh-system/meshd-local';
    expect(full.read(`${daemon}/discovery.log`)).toContain('discovery service ready');
    const syncz = JSON.parse(full.read(`${daemon}/debug/syncz`)) as { proxy: string }[];
    expect(syncz.map((entry) => entry.proxy)).toEqual(expect.arrayContaining(['httpbin-foo.foo', 'sleep-bar.bar']));
    for (const view of ['adsz', 'push_status', 'configz', 'registryz', 'endpointz', 'mesh']) expect(full.files).toContain(`${daemon}/debug/${view}`);

    for (const pod of ['foo/httpbin-foo', 'foo/sleep-foo', 'bar/httpbin-bar', 'bar/sleep-bar', 'mesh-system/mesh-ingressgateway']) {
      const folder = `proxies/${pod}`;
      const dump = JSON.parse(full.read(`${folder}/config_dump`)) as { configs: { '@type': string }[] };
      expect(dump.configs.map((config) => config['@type'])).toEqual(
        expect.arrayContaining(['type.googleapis.com/envoy.admin.v3.ClustersConfigDump', 'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump']),
      );
      expect(full.read(`${folder}/mesh-proxy.log`)).toContain('xDS proxy listening');
      expect(full.read(`${folder}/stats/prometheus`)).toMatch(/^# TYPE /m);
      for (const file of ['clusters', 'listeners', 'server_info']) expect(full.files).toContain(`${folder}/${file}`);
    }

    const log = full.read('bug-report.log');
    // The daemon's line is critical; the proxies' matching lines are ignored, so they are not ranked.
    expect(log).toMatch(
      /^Critical errors \(\*discovery service ready\*, \*xDS proxy listening\*\): 1 pods\n {2}mesh-system\/meshd-local: 1 critical error lines \(meshd\/mesh-system\/meshd-local\)\n {4}.*discovery service ready/,
    );
    expect(log).toMatch(/^Other pods gathered: bar\/httpbin-bar, bar\/sleep-bar, foo\/httpbin-foo, foo\/sleep-foo, mesh-system\/mesh-ingressgateway$/m);
    expect(log).toContain('analyze: skipped, the analyzer does not exist yet');
    expect(log).not.toContain('FAILED');
  });

  test('secrets: names and types only; no value, no private key anywhere in the archive', () => {
    expect(full.files.length).toBeGreaterThan(50);
    for (const needle of [SECRET_VALUE, b64(SECRET_VALUE), 'PRIVATE KEY', b64('-----BEGIN PRIVATE KEY-----').slice(0, 24)])
      expect({ needle, files: filesHolding(full, needle) }).toEqual({ needle, files: [] });
  });

  test('--full-secrets --include foo --dir: the values kept, only foo (and the mesh namespace) gathered, the tree beside the archive', async () => {
    const { result, cwd } = await bugReport(['--full-secrets', '--include', 'foo', '--dir', 'out']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`Creating an archive at ${join(cwd, 'out', 'bug-report.tar.gz')}.`);
    expect(existsSync(join(cwd, 'bug-report.tar.gz'))).toBe(false);
    const tree = extract(join(cwd, 'out', 'bug-report.tar.gz'));
    expect(readFileSync(join(cwd, 'out', 'bug-report', 'cluster/secrets/foo.yaml'), 'utf8')).toBe(tree.read('cluster/secrets/foo.yaml'));
    expect(tree.read('cluster/secrets/foo.yaml')).toContain(b64(SECRET_VALUE));
    expect(filesHolding(tree, b64(PRIVATE_KEY))).toEqual(['cluster/secrets/foo.yaml']);
    expect(new Set(tree.files.filter((path) => path.startsWith('proxies/')).map((path) => path.split('/').slice(0, 3).join('/')))).toEqual(
      new Set(['proxies/foo/httpbin-foo', 'proxies/foo/sleep-foo']),
    );
    expect(
      new Set(tree.files.filter((path) => path.startsWith('cluster/k8s-resources/') && path.split('/').length === 4).map((path) => path.split('/')[2])),
    ).toEqual(new Set(['foo', 'mesh-system']));
    expect(tree.files).toContain('meshd/mesh-system/meshd-local/discovery.log');
  });

  test("-f settings: flags win over the file; the time window (the file's --end-time) leaves the logs empty", async () => {
    const settings = join(workDir, 'settings.yaml');
    writeFileSync(settings, 'include: [bar]\nend-time: "2000-01-01T00:00:00Z"\n');
    const { result, cwd } = await bugReport(['-f', settings, '--include', 'foo']);
    expect(result.code).toBe(0);
    const tree = extract(join(cwd, 'bug-report.tar.gz'));
    expect(tree.files.filter((path) => path.endsWith('mesh-proxy.log')).sort()).toEqual([
      'proxies/foo/httpbin-foo/mesh-proxy.log',
      'proxies/foo/sleep-foo/mesh-proxy.log',
    ]);
    expect(tree.read('proxies/foo/httpbin-foo/mesh-proxy.log')).toBe('');
    expect(tree.read('meshd/mesh-system/meshd-local/discovery.log')).toBe('');
    expect(tree.read('bug-report.log')).toContain('end-time=2000-01-01T00:00:00.000Z');
  });

  test('--dry-run prints what it would gather and writes nothing', async () => {
    const { result, cwd } = await bugReport(['--dry-run', '--include', 'bar']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('  proxies/bar/httpbin-bar/config_dump\n');
    expect(result.stdout).toContain('  meshd/mesh-system/meshd-local/debug/syncz\n');
    expect(result.stdout).not.toContain('proxies/foo/');
    expect(result.stdout).not.toContain('Creating an archive');
    expect(readdirSync(cwd)).toEqual([]);
  });

  test('a tiny --timeout still writes an archive of what was gathered, and says so', async () => {
    const { result, cwd } = await bugReport(['--timeout', '1ms']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('Timeout of 1ms reached: archiving what was gathered.');
    expect(result.stdout).toMatch(/^Done \(timed out/m);
    const tree = extract(join(cwd, 'bug-report.tar.gz'));
    expect(tree.read('bug-report.log')).toContain('--timeout 1ms expired: gathering stopped; the archive holds what was gathered');
    expect(tree.files.length).toBeLessThan(full.files.length);
  });

  test('--duration with --start-time is refused (exit 64, naming both); nothing written', async () => {
    const { result, cwd } = await bugReport(['--duration', '1h', '--start-time', '2024-01-01T00:00:00Z']);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--duration and --start-time cannot be used together');
    expect(readdirSync(cwd)).toEqual([]);
  });
});
