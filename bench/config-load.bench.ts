/**
 * Config pipeline benchmark: prints figures and ratios, never passes or fails.
 *
 *   - load: 10,000 policies (AuthorizationPolicy, PeerAuthentication, RequestAuthentication over
 *     100 namespaces) from a config folder into the model, timed from the manager's start to the
 *     model holding every object (folder scanned and parsed, every object validated and stored);
 *   - the same load against a yardstick measured in the same run (the files read and parsed with
 *     `yaml` alone on this thread): with one parse thread, with every core (this thread and a
 *     worker per other core, started with the config source 300 ms before, as in the daemon), and
 *     without that lead; with the CPU time of this thread and of all threads (Linux);
 *   - one file change to the push request on the ConfigUpdater seam, p50/p99 over many changes:
 *     from the folder source noticing it (its event, the folder's debounce and rescan excluded)
 *     and end to end (from the write returning, so fs.watch, the 100 ms debounce and the rescan
 *     of the whole folder are included).
 *
 *   npm run build:bench && node dist/bench/config-load.bench.js [changes] [--profile dir]
 *
 * `--profile dir` writes a CPU profile of the main thread during the load on one parse thread and
 * during the load on every core (`load-1-thread.cpuprofile`, `load-<n>-threads.cpuprofile`).
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { PushRequest } from '../controllers/index.js';
import { setupConfigPipeline, type ConfigPipelineOptions } from '../controllers/testing/config-pipeline.js';
import { loadSettings, newManager, newMetrics, newNopLogger } from '../runtime/index.js';
import { newPhaseProfiler } from './phase-profiler.js';

const ARGS = parseArgs({ allowPositionals: true, options: { profile: { type: 'string' } } });

const POLICIES = 10_000;
const NAMESPACES = 100;
const FILES = 100;
const DEBOUNCE_MS = 100;
const LOAD_GOAL_MS = 2_000;
const CHANGE_GOAL_MS = 5;
/** How long before its caches the daemon builds its config source (see `loadOnce`). */
const SOURCE_LEAD_MS = 300;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function f(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** The i-th policy of the folder, as YAML: a mix of the three security kinds. */
function policy(i: number): string {
  const namespace = `ns-${i % NAMESPACES}`;
  switch (i % 4) {
    case 0:
    case 1:
      return `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata:
  name: allow-${i}
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: app-${i % 50}
  action: ALLOW
  rules:
    - from:
        - source:
            principals: ["cluster.local/ns/${namespace}/sa/client-${i % 7}"]
      to:
        - operation:
            methods: ["GET", "POST"]
            paths: ["/api/${i}/*"]
      when:
        - key: request.headers[x-tenant]
          values: ["tenant-${i % 13}"]
`;
    case 2:
      return `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata:
  name: mtls-${i}
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: app-${i % 50}
  mtls:
    mode: STRICT
  portLevelMtls:
    "8080":
      mode: PERMISSIVE
`;
    default:
      return `apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata:
  name: jwt-${i}
  namespace: ${namespace}
spec:
  selector:
    matchLabels:
      app: app-${i % 50}
  jwtRules:
    - issuer: https://issuer-${i % 11}.example.com
      jwksUri: https://issuer-${i % 11}.example.com/jwks.json
      audiences: ["api-${i % 5}"]
      forwardOriginalToken: true
`;
  }
}

function changedPolicy(round: number): string {
  return `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata:
  name: bench-change
  namespace: ns-0
spec:
  mtls:
    mode: ${round % 2 === 0 ? 'STRICT' : 'PERMISSIVE'}
`;
}

/** CPU time of the calling thread (Linux: /proc/thread-self; NaN elsewhere), to read figures taken beside other jobs. */
function threadCpuMs(): number {
  try {
    const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return NaN;
  }
}

function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

interface Timed {
  wallMs: number;
  /** This thread's CPU, and every thread's. */
  mainCpuMs: number;
  cpuMs: number;
}

async function timed(run: () => Promise<void>): Promise<Timed> {
  const [main, all, started] = [threadCpuMs(), processCpuMs(), performance.now()];
  await run();
  return { wallMs: performance.now() - started, mainCpuMs: threadCpuMs() - main, cpuMs: processCpuMs() - all };
}

/** The yardstick of the same run: every file read and parsed with `yaml` alone, on this thread (the faster of two passes). */
async function parseAlone(paths: readonly string[]): Promise<Timed> {
  let best: Timed | undefined;
  for (let round = 0; round < 2; round++) {
    const pass = await timed(async () => {
      for (const path of paths) for (const document of parseAllDocuments(await readFile(path, 'utf8'))) document.toJS();
    });
    if (!best || pass.wallMs < best.wallMs) best = pass;
  }
  return best as Timed;
}

/** The daemon's config side over the folder, as the benchmark runs it. */
function pipelineOver(
  dir: string,
  manager: ReturnType<typeof newManager>,
  parts: Pick<ConfigPipelineOptions, 'metrics' | 'updater' | 'configDirOptions'>,
): ReturnType<typeof setupConfigPipeline> {
  return setupConfigPipeline(manager, {
    configDir: dir,
    registries: ['orch'],
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
    resyncMs: 0,
    qps: 80,
    burst: 160,
    meshConfigFile: join(dir, 'no-mesh-config'),
    rootNamespace: 'mesh-system',
    settings: loadSettings('pilot-discovery', {}),
    log: newNopLogger(),
    ...parts,
  });
}

/**
 * One load of the folder into a fresh pipeline with `workers` parse threads: manager start → model
 * complete. The parse threads start with the config source, `sourceLeadMs` before the manager: the
 * daemon builds its config source, then starts its servers and CA before its caches (its log shows
 * 330–400 ms from "starting discovery service" to "watching config folder" on this machine).
 */
async function loadOnce(dir: string, workers: number, sourceLeadMs: number): Promise<Timed> {
  const manager = newManager({ log: newNopLogger() });
  const pipeline = pipelineOver(dir, manager, {
    metrics: newMetrics('pilot-discovery'),
    updater: { configUpdate: () => undefined },
    configDirOptions: { debounceMs: DEBOUNCE_MS, rescanIntervalMs: 60_000, watch: false, parseThreads: workers },
  });
  if (sourceLeadMs > 0) await sleep(sourceLeadMs);
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const load = await timed(async () => {
    running = manager.start(stop.signal);
    await pipeline.waitForSync();
  });
  stop.abort();
  await running;
  return load;
}

async function main(): Promise<void> {
  const changes = Number(ARGS.positionals[0] ?? 100);
  const dir = await mkdtemp(join(tmpdir(), 'config-load-bench-'));
  const perFile = POLICIES / FILES;
  for (let file = 0; file < FILES; file++) {
    const documents: string[] = [];
    for (let i = file * perFile; i < (file + 1) * perFile; i++) documents.push(policy(i));
    await mkdir(join(dir, `group-${file % 10}`), { recursive: true });
    await writeFile(join(dir, `group-${file % 10}`, `policies-${file}.yaml`), documents.join('---\n'));
  }
  await writeFile(join(dir, 'bench-change.yaml'), changedPolicy(0));
  const paths = (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.yaml')).map((name) => join(dir, name));
  const yardstick = await parseAlone(paths);
  const parseMs = yardstick.wallMs;
  const workers = availableParallelism();
  // Warm the code paths once, then one load on one thread and one on every core, same folder.
  await loadOnce(dir, 1, 0);
  const profiler = await newPhaseProfiler(ARGS.values.profile);
  const single = await profiler.around('load-1-thread', () => loadOnce(dir, 1, SOURCE_LEAD_MS));
  const parallel = await profiler.around(`load-${workers}-threads`, () => loadOnce(dir, workers, SOURCE_LEAD_MS));
  await profiler.close();
  const coldParallelMs = (await loadOnce(dir, workers, 0)).wallMs;
  const [singleMs, parallelMs] = [single.wallMs, parallel.wallMs];

  const pushes: { at: number; request: PushRequest }[] = [];
  const metrics = newMetrics('pilot-discovery');
  const manager = newManager({ log: newNopLogger() });
  const pipeline = pipelineOver(dir, manager, {
    metrics,
    updater: { configUpdate: (request) => pushes.push({ at: performance.now(), request }) },
    configDirOptions: { debounceMs: DEBOUNCE_MS, rescanIntervalMs: 60_000 },
  });
  const configDir = pipeline.configDir;
  if (!configDir) throw new Error('the pipeline has no config folder');
  // Subscribed before the manager starts, so this handler runs before the controller's.
  let noticedAt: number;
  configDir.sourceFor('security.mesh.io/v1beta1', 'PeerAuthentication').subscribe((event) => {
    if (event.object.metadata?.name === 'bench-change') noticedAt = performance.now();
  });
  const stop = new AbortController();
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const running = manager.start(stop.signal);
  await configDir.waitForSync();
  const folderSyncedAt = performance.now();
  await pipeline.waitForSync();
  const loadedAt = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const { configStore } = pipeline.model;
  const loaded =
    configStore.list('AuthorizationPolicy').length + configStore.list('PeerAuthentication').length + configStore.list('RequestAuthentication').length;
  if (loaded !== POLICIES + 1) throw new Error(`expected ${POLICIES + 1} policies in the model, found ${loaded}`);
  const loadMs = loadedAt - startedAt;
  const heapMb = process.memoryUsage().heapUsed / 1024 / 1024;

  const fromNotice: number[] = [];
  const endToEnd: number[] = [];
  for (let round = 1; round <= changes; round++) {
    const before = pushes.length;
    noticedAt = 0;
    await writeFile(join(dir, 'bench-change.yaml'), changedPolicy(round));
    const writtenAt = performance.now();
    const push = await new Promise<{ at: number }>((resolve, reject) => {
      const deadline = performance.now() + 10_000;
      const poll = (): void => {
        const found = pushes.slice(before).find((p) => p.request.configsUpdated.some((key) => key.name === 'bench-change'));
        if (found) resolve(found);
        else if (performance.now() > deadline) reject(new Error(`no push request for change ${round}`));
        else setImmediate(poll);
      };
      poll();
    });
    fromNotice.push(push.at - noticedAt);
    endToEnd.push(push.at - writtenAt);
  }
  fromNotice.sort((a, b) => a - b);
  endToEnd.sort((a, b) => a - b);

  stop.abort();
  await running;
  await rm(dir, { recursive: true, force: true });

  const p99 = percentile(fromNotice, 99);
  const lines = [
    `Config pipeline on ${cpus().length} cores, Node ${process.version}`,
    '',
    `| figure | value | goal |`,
    `|---|---:|---:|`,
    `| load ${f(POLICIES)} policies (${FILES} files, ${NAMESPACES} namespaces) into the model | ${f(loadMs)} ms | < ${f(LOAD_GOAL_MS)} ms (${f(loadMs / LOAD_GOAL_MS, 2)}x the goal) |`,
    `|   of which: folder scanned and parsed (source synced) | ${f(folderSyncedAt - startedAt)} ms | |`,
    `| yardstick: the same files read and parsed with \`yaml\` alone, one thread | ${f(parseMs)} ms | |`,
    `| load with 1 parse thread ÷ parse alone (both pipelines built ${SOURCE_LEAD_MS} ms before the start, as in the daemon) | ${f(singleMs)} ms ÷ ${f(parseMs)} ms = ${f(singleMs / parseMs, 2)} | ≤ 1.2 |`,
    `| load with ${workers} parse threads ÷ parse alone | ${f(parallelMs)} ms ÷ ${f(parseMs)} ms = ${f(parallelMs / parseMs, 2)} | ≤ 1.2, and < 1 (beats one-thread parsing) |`,
    `| speed-up, 1 → ${workers} parse threads | ${f(singleMs / parallelMs, 2)}x | |`,
    `|   CPU: parse alone; load on 1 thread; load on ${workers}: this thread, all threads | ${f(yardstick.mainCpuMs)}; ${f(single.mainCpuMs)}; ${f(parallel.mainCpuMs)}, ${f(parallel.cpuMs)} ms | |`,
    `|   the same, parse threads started at the manager's start (no lead) ÷ parse alone | ${f(coldParallelMs)} ms ÷ ${f(parseMs)} ms = ${f(coldParallelMs / parseMs, 2)} | |`,
    `|   of which: validated and stored by the reconcilers after that | ${f(loadedAt - folderSyncedAt)} ms | |`,
    `|   CPU (user + system) during the load | ${f((cpu.user + cpu.system) / 1000)} ms | |`,
    `|   heap used after the load | ${f(heapMb)} MB | |`,
    `| one file change, source event to push request, p50 (${changes} changes) | ${f(percentile(fromNotice, 50), 3)} ms | |`,
    `| one file change, source event to push request, p99 | ${f(p99, 3)} ms | < ${f(CHANGE_GOAL_MS)} ms (${f(p99 / CHANGE_GOAL_MS, 2)}x the goal) |`,
    `| one file change, write to push request, p50 (fs.watch + ${DEBOUNCE_MS} ms debounce + rescan of the folder included) | ${f(percentile(endToEnd, 50), 1)} ms | |`,
    `| one file change, write to push request, p99 | ${f(percentile(endToEnd, 99), 1)} ms | |`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`);
  process.exitCode = 1;
});
