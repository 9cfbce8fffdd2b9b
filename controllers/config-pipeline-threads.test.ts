import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KIND_NAMES } from '../crds/index.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import type * as Controllers from './index.js';
import type * as Runtime from '../runtime/index.js';
import type * as Pool from './sources/parse-pool.js';
import { writeMixedConfigFolder } from './testing/mixed-config-folder.js';

// The daemon's config side from the build (`npm run build`): its parse threads need the compiled
// worker script. One run parses and checks on one thread, the other on two worker threads.
async function fromBuild<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(PROJECT_ROOT, 'dist', path)).href)) as T;
}

interface Outcome {
  model: unknown[];
  rejected: unknown;
  logs: string[];
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'config-pipeline-threads-'));
  await writeMixedConfigFolder(dir, 3);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(pool: Pool.ParsePool | undefined): Promise<Outcome> {
  const controllers = await fromBuild<typeof Controllers>('controllers/index.js');
  const runtime = await fromBuild<typeof Runtime>('runtime/index.js');
  const entries: LogEntry[] = [];
  const log = newRecordingLogger(entries);
  const metrics = runtime.newMetrics('pilot-discovery');
  const manager = runtime.newManager({ log: runtime.newNopLogger() });
  const environment = controllers.newMeshEnvironment({
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
    meshConfigFile: join(dir, 'absent'),
    useEndpointSlices: false,
    log,
    metrics,
  });
  const config = controllers.setupConfigWithManager(manager, {
    environment,
    configDir: dir,
    registries: ['orch'],
    resyncMs: 0,
    qps: 80,
    burst: 160,
    rootNamespace: 'mesh-system',
    settings: runtime.loadSettings('pilot-discovery', {}),
    log,
    metrics,
    updater: { configUpdate: () => undefined },
    configDirOptions: { watch: false, rescanIntervalMs: 60_000, ...(pool ? { parsePool: pool } : { parseThreads: 1 }) },
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await config.waitForSync(AbortSignal.timeout(20_000));
    const { configStore } = environment.model;
    // Store versions follow the order of the reconciles; creation times, the second of the run.
    const model = KIND_NAMES.flatMap((kind) =>
      configStore.list(kind).map(({ version: _version, ...entry }) => ({
        ...entry,
        resource: { ...entry.resource, metadata: { ...entry.resource.metadata, creationTimestamp: 'then' } },
      })),
    );
    const rejected = (await metrics.counter('pilot_total_rejected_configs').get()).values;
    // Each reconcile has an id of its own.
    const logs = entries
      .filter((entry) => entry.level === 'error' || entry.level === 'warn')
      .map(({ fields: { reconcileId: _id, ...fields }, ...entry }) => JSON.stringify({ ...entry, fields }));
    return { model, rejected, logs: logs.sort() };
  } finally {
    stop.abort();
    await running;
  }
}

describe('the config pipeline with parse threads', () => {
  test('fills the model, rejects and logs exactly as with one thread', async () => {
    const { newParsePool } = await fromBuild<typeof Pool>('controllers/sources/parse-pool.js');
    const pool = newParsePool({ threads: 3, minParallelBytes: 0 });
    const threaded = await load(pool);
    expect(pool.threads()).toBe(0);
    const single = await load(undefined);
    expect(JSON.stringify(threaded.model)).toBe(JSON.stringify(single.model));
    expect(threaded.rejected).toEqual(single.rejected);
    expect(threaded.logs).toEqual(single.logs);
    // The folder has both kinds: accepted policies and rejected ones (each rejection named and logged).
    expect(single.model.length).toBeGreaterThan(100);
    expect(single.logs.filter((line) => line.includes('config rejected')).length).toBeGreaterThan(50);
  });
});
