import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { addonPod, openDashboard } from '../../meshctl/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { collect, PROJECT_ROOT, runBin, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl version, admin log, dashboard, options and x config list, run as built, against the API
// server double. Pod meshd-a is the real daemon (its monitoring port 15014 and ControlZ 9876 mapped
// to where it listens on loopback); pod meshd-b (revision canary) is a small HTTP server standing
// in for a second daemon of another version that knows three proxies.
const TESTDATA = join(PROJECT_ROOT, 'cli', 'testdata', 'meshctl-small');
let dir: string;
let kube: ApiServerDouble;
let daemon: ChildProcess;
let daemonExited: Promise<unknown>;
let monitoringPort: number;
let ctrlzPort: number;
let standIn: Server;
let standInVersion = '';
let daemonVersion = '';

const meshctl = (args: string[], env: Record<string, string> = {}) =>
  runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent', ...env });
const scopeOf = async (scope: string) =>
  (await (await fetch(`http://127.0.0.1:${ctrlzPort}/scopej/${scope}`)).json()) as { output_level: string; stack_trace_level: string };
/** The client's version (this build) in place of the number, so outputs read as goldens. */
const normalised = (text: string) => text.split(daemonVersion).join('<version>');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-small-'));
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), join(dir, 'config'), { recursive: true });
  [monitoringPort, ctrlzPort] = [await freePort(), await freePort()];
  const httpPort = await freePort();
  daemon = startBin(
    'pilot-discovery',
    [
      'discovery',
      '--configDir',
      join(dir, 'config'),
      '--monitoringAddr',
      `127.0.0.1:${monitoringPort}`,
      '--httpAddr',
      `127.0.0.1:${httpPort}`,
      '--httpsAddr',
      '127.0.0.1:0',
      '--grpcAddr',
      '127.0.0.1:0',
      '--secureGRPCAddr',
      '127.0.0.1:0',
      '--ctrlz_address',
      '127.0.0.1',
      '--ctrlz_port',
      String(ctrlzPort),
    ],
    {},
    dir,
  );
  daemonExited = collect(daemon, 120_000).catch(() => undefined);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, { timeoutMs: 30_000, description: 'the daemon to be ready' });
  daemonVersion = ((await (await fetch(`http://127.0.0.1:${monitoringPort}/version`)).json()) as { version: string }).version;
  standInVersion = daemonVersion;

  const syncz = ['reviews-v1-1.bookinfo', 'reviews-v2-1.bookinfo', 'ratings-v1-1.bookinfo'].map((proxy) => ({ proxy, meshVersion: '1.2.0', types: [] }));
  standIn = createServer((req, res) => {
    const body =
      req.url === '/version'
        ? { version: standInVersion, gitRevision: 'stand-in', nodeVersion: 'v0', buildStatus: 'Clean', gitTag: standInVersion }
        : req.url === '/debug/syncz'
          ? syncz
          : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  const standInPort = (standIn.address() as { port: number }).port;

  const ports: Record<string, number> = {
    'meshd-a:15014': monitoringPort,
    'meshd-a:9876': ctrlzPort,
    'meshd-b:15014': standInPort,
    'metrics-1:9090': standInPort,
  };
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    podResolver: (_ns, pod, port) => {
      const target = ports[`${pod}:${port}`];
      return target === undefined ? undefined : { host: '127.0.0.1', port: target };
    },
  });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const core = kube.kubeConfig().makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'empty']) await core.createNamespace({ body: { metadata: { name } } });
  const pods = [
    ['meshd-a', { app: 'meshd', 'mesh.io/rev': 'default' }],
    ['meshd-b', { app: 'meshd', 'mesh.io/rev': 'canary' }],
    ['metrics-1', { app: 'prometheus' }],
  ] as const;
  for (const [name, labels] of pods) {
    const pod = await core.createNamespacedPod({
      namespace: 'mesh-system',
      body: { metadata: { name, labels }, spec: { containers: [{ name: 'main', image: name }] } },
    });
    await core.replaceNamespacedPodStatus({ name, namespace: 'mesh-system', body: { ...pod, status: { phase: 'Running', podIP: '127.0.0.1' } } });
  }
}, 90_000);

afterAll(async () => {
  daemon?.kill('SIGTERM');
  await daemonExited;
  await new Promise<void>((resolve) => (standIn ? standIn.close(() => resolve()) : resolve()));
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl version', () => {
  test('daemons that agree coalesce into one control plane line; the proxies they know are counted by version', async () => {
    standInVersion = daemonVersion;
    const result = await meshctl(['version']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(normalised(result.stdout)).toBe('client version: <version>\ncontrol plane version: <version>\ndata plane version: 1.2.0 (3 proxies)\n');
  });

  test("daemons that differ get a line each; -r picks one revision's daemons", async () => {
    standInVersion = '9.9.9';
    try {
      expect(normalised((await meshctl(['version'])).stdout)).toBe(
        'client version: <version>\nmeshd-a version: <version>\nmeshd-b version: 9.9.9\ndata plane version: 1.2.0 (3 proxies)\n',
      );
      expect(normalised((await meshctl(['version', '-r', 'default'])).stdout)).toBe(
        'client version: <version>\ncontrol plane version: <version>\ndata plane version: none\n',
      );
      expect(normalised((await meshctl(['version', '--revision', 'canary'])).stdout)).toBe(
        'client version: <version>\ncontrol plane version: 9.9.9\ndata plane version: 1.2.0 (3 proxies)\n',
      );
    } finally {
      standInVersion = daemonVersion;
    }
  });

  test('a refused pod proxy falls back to a port-forward to the same port', async () => {
    kube.faults.denyAccess([{ resource: 'pods/proxy' }]);
    try {
      const result = await meshctl(['version']);
      expect([result.code, result.stderr]).toEqual([0, '']);
      expect(normalised(result.stdout)).toBe('client version: <version>\ncontrol plane version: <version>\ndata plane version: 1.2.0 (3 proxies)\n');
      // The forward reads the pod first: refusing that too leaves neither way (and shows the proxy was refused above).
      kube.faults.denyAccess([{ resource: 'pods/proxy' }, { verb: 'get', resource: 'pods' }]);
      const neither = await meshctl(['version']);
      expect(neither.code).toBe(0);
      expect(neither.stderr).toMatch(/^error reading the version of mesh-system\.meshd-a: pod proxy: .*; port-forward: /m);
      expect(normalised(neither.stdout)).toBe('<version>\n');
    } finally {
      kube.faults.denyAccess([]);
    }
  });

  test('-o json: clientVersion, meshVersion per daemon pod, dataPlaneVersion per proxy', async () => {
    const result = await meshctl(['version', '-o', 'json']);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as {
      clientVersion: { version: string };
      meshVersion: { Component: string; Revision: string; Info: { version: string } }[];
      dataPlaneVersion: { ID: string; MeshVersion: string }[];
    };
    expect(document.clientVersion.version).toBe(daemonVersion);
    expect(document.meshVersion.map((server) => [server.Component, server.Revision, server.Info.version])).toEqual([
      ['meshd-a', 'default', daemonVersion],
      ['meshd-b', 'canary', daemonVersion],
    ]);
    expect(document.dataPlaneVersion).toContainEqual({ ID: 'ratings-v1-1.bookinfo', MeshVersion: '1.2.0' });
    expect(document.dataPlaneVersion).toHaveLength(3);
  });

  test('--remote=false is the client alone; --short=false the full build information, a line per daemon and per proxy', async () => {
    expect(normalised((await meshctl(['version', '--remote=false'])).stdout)).toBe('<version>\n');
    const long = (await meshctl(['version', '--short=false'])).stdout.split('\n');
    expect(long[0]).toMatch(/^client version: version\.BuildInfo\{Version:"[^"]+", GitRevision:/);
    expect(long[1]).toMatch(/^meshd-a version: version\.BuildInfo\{/);
    expect(long[2]).toMatch(/^meshd-b version: version\.BuildInfo\{.*GitRevision:"stand-in"/);
    expect(long[3]).toBe('data plane version: version.ProxyInfo{ID:"reviews-v1-1.bookinfo", MeshVersion:"1.2.0"}');
  });

  test('without a daemon or without a cluster: the reason on stderr, the client version, exit 0', async () => {
    const absent = await meshctl(['version', '-i', 'empty']);
    expect([absent.code, normalised(absent.stdout), absent.stderr]).toEqual([0, '<version>\n', 'mesh is not present in the cluster with namespace "empty"\n']);
    const noCluster = await runBin('meshctl', ['version', '-c', join(dir, 'no-such-kubeconfig')], { env: { HOME: '/nonexistent' } });
    expect([noCluster.code, normalised(noCluster.stdout)]).toEqual([0, '<version>\n']);
    expect(noCluster.stderr).toContain('failed to load the orchestrator config');
  });

  test("bug-report version prints the client's build information", async () => {
    expect(normalised((await meshctl(['bug-report', 'version', '-s'])).stdout)).toBe('<version>\n');
    expect((JSON.parse((await meshctl(['bug-report', 'version', '-o', 'json'])).stdout) as { clientVersion: { version: string } }).clientVersion.version).toBe(
      daemonVersion,
    );
  });
});

describe('meshctl admin log', () => {
  test("reads the daemon's scopes through ControlZ, short and json; the first pod of several is named", async () => {
    const short = await meshctl(['admin', 'log']);
    expect(short.code).toBe(0);
    expect(short.stderr).toBe('more than 1 pods fits selector: app=meshd; will use pod: meshd-a\n');
    expect(short.stdout).toMatch(/^active_scopes:\n {2}ads:info\n {2}adsc:info\n/);
    const json = JSON.parse((await meshctl(['meshd', 'l', 'meshd-a', '-o', 'json'])).stdout) as { scope_name: string; log_level: string }[];
    expect(json).toContainEqual({ scope_name: 'ads', log_level: 'info' });
    expect(json.map((s) => s.scope_name)).toEqual([...json.map((s) => s.scope_name)].sort());
  });

  test('--level and --stack-trace-level set scopes; -r puts every scope back to info', async () => {
    const set = await meshctl(['admin', 'log', 'meshd-a', '--level', 'ads:debug,authn:warn', '--stack-trace-level', 'ads:error']);
    expect([set.code, set.stderr]).toEqual([0, '']);
    expect(await scopeOf('ads')).toMatchObject({ output_level: 'debug', stack_trace_level: 'error' });
    expect(await scopeOf('authn')).toMatchObject({ output_level: 'warn' });
    expect((await meshctl(['admin', 'log', 'meshd-a'])).stdout).toContain('\n  ads:debug\n');
    expect((await meshctl(['admin', 'log', 'meshd-a', '-r'])).code).toBe(0);
    expect(await scopeOf('ads')).toMatchObject({ output_level: 'info' });
    expect(await scopeOf('authn')).toMatchObject({ output_level: 'info' });
  });

  test.each([
    [['--level', 'ads:loud'], /--level "ads:loud": pattern <scope>:<level> with level one of none, error, warn, info, debug did not match/],
    [['--level', 'nosuch:debug'], /--level: unknown scope "nosuch"/],
    [['--stack-trace-level', 'ads'], /--stack-trace-level "ads": pattern/],
    [['-r', '--level', 'ads:debug'], /--level cannot be combined with --reset/],
    [['-o', 'yaml'], /--output yaml: want one of json\|short/],
  ])('bad input %j is a usage error naming it', async (args, message) => {
    const result = await meshctl(['admin', 'log', 'meshd-a', ...args]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(message);
    expect(await scopeOf('ads')).toMatchObject({ output_level: 'info' });
  });
});

describe('meshctl dashboard', () => {
  test("controlz forwards to the daemon's ControlZ, prints the URL, skips the browser, and stops on SIGTERM", async () => {
    const child = startBin('meshctl', ['-c', join(dir, 'kubeconfig'), 'dashboard', 'controlz', 'meshd-a', '--browser=false', '--address', '127.0.0.1'], {
      HOME: '/nonexistent',
    });
    const exited = collect(child, 30_000);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      const url = await waitFor(() => /^(http:\/\/127\.0\.0\.1:\d+)\nskipping opening a browser\n$/.exec(stdout)?.[1], {
        timeoutMs: 20_000,
        description: 'the dashboard URL',
      });
      const scopes = (await (await fetch(`${url}/scopej/`)).json()) as { name: string }[];
      expect(scopes.map((scope) => scope.name)).toContain('ads');
      child.kill('SIGTERM');
      const result = await exited;
      expect(result.code).toBe(0);
      await expect(fetch(`${url}/scopej/`)).rejects.toThrow();
    } finally {
      child.kill('SIGKILL');
      await exited.catch(() => undefined);
    }
  });

  test('an add-on is found by its label; -l picks the first of several pods; the browser opener gets the URL', async () => {
    const stop = new AbortController();
    const opened: string[] = [];
    const out: string[] = [];
    const pod = await addonPod(
      kube.kubeConfig(),
      { command: 'metrics-store', title: 'metrics store', selector: 'app=prometheus', port: 9090, path: '' },
      'mesh-system',
    );
    expect(pod).toBe('metrics-1');
    const running = openDashboard(kube.kubeConfig(), {
      namespace: 'mesh-system',
      pod,
      remotePort: 9090,
      address: '127.0.0.1',
      localPort: 0,
      urlPath: '',
      browser: true,
      until: stop.signal,
      opener: async (url) => {
        opened.push(url);
      },
      out: (text) => out.push(text),
    });
    const url = await waitFor(() => opened[0], { description: 'the browser to be asked' });
    expect(out).toEqual([`${url}\n`]);
    expect(((await (await fetch(`${url}/debug/syncz`)).json()) as unknown[]).length).toBe(3);
    stop.abort();
    await running;
    await expect(fetch(`${url}/debug/syncz`)).rejects.toThrow();

    const child = startBin(
      'meshctl',
      ['-c', join(dir, 'kubeconfig'), 'd', 'controlz', '-l', 'app=meshd', '--browser=false', '--address', '127.0.0.1', '-p', String(await freePort())],
      { HOME: '/nonexistent' },
    );
    const exited = collect(child, 30_000);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      const viaSelector = await waitFor(() => /^(http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)?.[1], { timeoutMs: 20_000, description: 'the dashboard URL' });
      expect((await fetch(`${viaSelector}/scopej/ads`)).status).toBe(200);
      child.kill('SIGINT');
      const result = await exited;
      expect([result.code, result.stderr]).toEqual([0, 'more than 1 pods fits selector: app=meshd; will use pod: meshd-a\n']);
    } finally {
      child.kill('SIGKILL');
      await exited.catch(() => undefined);
    }
  });

  test.each([
    [['controlz'], 64, /specify a pod or --selector/],
    [['controlz', 'meshd-a', '-l', 'app=meshd'], 64, /name cannot be provided when a selector is specified/],
    [['proxy'], 64, /specify a pod or --selector/],
    [['service-graph'], 1, /not able to locate service graph pod: no running pods match the selector "app=kiali" in namespace mesh-system/],
    [['metrics-store', '-i', 'empty'], 1, /selector "app=prometheus" in namespace empty/],
  ])('%j fails: %s', async (args, code, message) => {
    const result = await meshctl(['dashboard', ...args, '--browser=false']);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
  });
});

describe('meshctl options and x config list', () => {
  test('options prints the global flags as the reference does (golden)', async () => {
    const result = await meshctl(['options']);
    expect(result.code).toBe(0);
    expectGoldenText(join(TESTDATA, 'options.golden.txt'), result.stdout);
  });

  test('x config list: each default, from the environment, the MESHCONFIG file or built in (golden)', async () => {
    const file = join(dir, 'meshctl-config.yaml');
    writeFileSync(file, 'meshNamespace: mesh-prod\nxds-address: meshd.example:15012\n');
    const result = await meshctl(['x', 'config', 'list'], { MESHCONFIG: file, MESHCTL_XDS_PORT: '15099', MESHCTL_PLAINTEXT: 'true' });
    expect(result.code).toBe(0);
    expectGoldenText(join(TESTDATA, 'config-list.golden.txt'), result.stdout.split(file).join('<MESHCONFIG>'));
  });

  test('prefer-experimental (environment or MESHCONFIG): the xDS variants of version and proxy-status take the top level, the stable ones go to legacy', async () => {
    const file = join(dir, 'meshctl-experimental.yaml');
    writeFileSync(file, 'prefer-experimental: true\n');
    for (const env of [{ MESHCTL_PREFER_EXPERIMENTAL: 'true' }, { MESHCONFIG: file }] as Record<string, string>[]) {
      expect((await meshctl(['version', '--help'], env)).stdout).toContain('--xds-address');
      expect((await meshctl(['proxy-status', '--help'], env)).stdout).toContain('--xds-label');
      const legacy = await meshctl(['legacy', '--help'], env);
      expect(legacy.stdout).toMatch(/^ {2}proxy-status\|ps /m);
      expect(legacy.stdout).toMatch(/^ {2}version /m);
      expect((await meshctl(['legacy', 'version', '--help'], env)).stdout).not.toContain('--xds-address');
    }
    expect((await meshctl(['version', '--help'])).stdout).not.toContain('--xds-address');
    expect((await meshctl(['--help'])).stdout).not.toMatch(/^ {2}legacy /m);
  });
});
