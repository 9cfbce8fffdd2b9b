import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { fakeEnvoyRuns, writeFakeEnvoy } from '../../testing/fake-envoy.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { dataPlaneLaunch } from './data-plane-launch.js';
import { newDataPlaneProcess, type DataPlaneProcess } from './data-plane-process.js';

let dir: string;
let envoy: string;
let bootstrapPath: string;
let adminUrl: string;
const runs = (): ReturnType<typeof fakeEnvoyRuns> => (existsSync(join(dir, 'runs.log')) ? fakeEnvoyRuns(readFileSync(join(dir, 'runs.log'), 'utf8')) : []);
const LAUNCH = { proxyLogLevel: 'warning,misc:error', proxyComponentLogLevel: '', concurrency: 2, drainDuration: '45s' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'data-plane-process-'));
  envoy = writeFakeEnvoy(dir);
  const port = await freePort();
  bootstrapPath = join(dir, 'envoy-rev.json');
  writeFileSync(bootstrapPath, JSON.stringify({ admin: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }));
  adminUrl = `http://127.0.0.1:${port}`;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('how the data plane is launched', () => {
  test('an envoy binary on the path runs with the bootstrap and the reference flags', async () => {
    const launch = await dataPlaneLaunch({ ...LAUNCH, bootstrapPath, envoyBinary: envoy });
    expect(launch.command).toBe(envoy);
    expect(launch.args).toEqual([
      '-c',
      bootstrapPath,
      '--drain-time-s',
      '45',
      '--drain-strategy',
      'immediate',
      '--local-address-ip-version',
      'v4',
      '--file-flush-interval-msec',
      '1000',
      '--disable-hot-restart',
      '--allow-unknown-static-fields',
      '-l',
      'warning',
      '--component-log-level',
      'misc:error',
      '--concurrency',
      '2',
    ]);
  });

  test('the deprecated component flag wins over the components of proxyLogLevel; concurrency 0 is left to Envoy', async () => {
    const launch = await dataPlaneLaunch({
      ...LAUNCH,
      proxyLogLevel: 'debug,misc:error',
      proxyComponentLogLevel: 'rbac:debug',
      concurrency: 0,
      bootstrapPath,
      envoyBinary: envoy,
    });
    expect(launch.args.slice(launch.args.indexOf('-l'))).toEqual(['-l', 'debug', '--component-log-level', 'rbac:debug']);
  });

  test('without envoy the embedded data plane program runs on the same bootstrap and level', async () => {
    const launch = await dataPlaneLaunch({ ...LAUNCH, bootstrapPath, envoyBinary: join(dir, 'no-such-envoy') });
    expect(launch.command).toBe(process.execPath);
    expect(launch.args[launch.args.length - 4]).toBe('-c');
    expect(launch.args.slice(-3)).toEqual([bootstrapPath, '-l', 'warning']);
    expect(launch.args[0]).toMatch(/bin\/mesh-dataplane\.js$/);
  });
});

describe('supervising the data plane process', () => {
  let supervisor: DataPlaneProcess;
  const entries: LogEntry[] = [];

  beforeAll(async () => {
    supervisor = newDataPlaneProcess({
      launch: await dataPlaneLaunch({ ...LAUNCH, bootstrapPath, envoyBinary: envoy }),
      adminUrl,
      inboundOnlyDrain: true,
      log: newRecordingLogger(entries),
      initialRestartDelayMs: 50,
      maxRestartDelayMs: 400,
    });
    supervisor.start();
  });

  afterAll(() => supervisor.stop());

  test('ready only once it is live and accepted listeners and clusters', async () => {
    await waitFor(() => runs().length === 1, { timeoutMs: 5_000, description: 'the first start' });
    expect(runs()[0]?.args?.slice(0, 2)).toEqual(['-c', bootstrapPath]);
    await waitFor(async () => /update_success is 0/.test((await supervisor.notReady()) ?? ''), {
      timeoutMs: 5_000,
      description: 'admin up, config not accepted',
    });
    expect(await supervisor.notReady()).toContain('cluster_manager.cds.update_success');
    writeFileSync(join(dir, 'synced'), '');
    expect(await supervisor.notReady()).toBeUndefined();
  });

  test('restarted with growing backoff when it dies', async () => {
    for (const expected of [1, 2]) {
      const pid = supervisor.pid();
      expect(pid).toBeDefined();
      process.kill(pid ?? 0, 'SIGKILL');
      await waitFor(() => supervisor.restarts() === expected && supervisor.pid() !== undefined && supervisor.pid() !== pid, {
        timeoutMs: 5_000,
        description: `restart ${expected}`,
      });
    }
    const delays = entries.filter((entry) => entry.message === 'data plane exited; restarting').map((entry) => entry.fields['restartInMs']);
    expect(delays).toEqual([50, 100]);
    await waitFor(async () => (await supervisor.notReady()) === undefined, { timeoutMs: 5_000, description: 'ready again after the restart' });
  });

  test('drained through the admin API, then ended with SIGTERM and not restarted', async () => {
    await supervisor.drain(0);
    expect(readFileSync(join(dir, 'drains.log'), 'utf8').trim()).toBe('/drain_listeners?inboundonly&graceful');
    const pid = supervisor.pid();
    await supervisor.stop();
    expect(
      runs()
        .filter((run) => run.terminated)
        .map((run) => run.pid),
    ).toContain(pid);
    expect(supervisor.pid()).toBeUndefined();
    expect(await supervisor.notReady()).toBe('data plane not running');
  });
});
