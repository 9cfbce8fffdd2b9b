/**
 * Soak: the local mesh (the built daemon, an agent with its embedded data plane per meshed pod,
 * the sample backends) plus simulated xDS proxies connected to the daemon, under steady HTTP
 * traffic through the sidecars (mutual TLS) while policies, routing, services and endpoints
 * churn. Prints, per interval and at the end, each process's memory (RSS, heap) with its slope
 * after warm-up, open handles and descriptors, request outcomes (failures outside deny windows,
 * denials inside them), pushes, NACKs and xDS connections. Never passes or fails on figures; it
 * exits non-zero only when the harness itself breaks.
 *
 *   npm run bench:soak [-- --minutes 10 --proxies 200 --rps 40 --interval 30 --warmup 2 --step 5 --grace 3 --verbose]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalMesh, type LocalMesh } from '../e2e/local-mesh/local-mesh.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../xds/envoy/index.js';
import { CHURN_FILES, DENY_FROM, DENY_TO, churnCycle, type DenyWindow } from './soak-churn.js';
import { clock, counts, delta, newSeries, processTable, summaryTable } from './soak-report.js';
import { byLabel, childrenOf, heapAndHandles, procSample, scrape, sumOf, type ProcessSample } from './soak-sampler.js';
import { requestOnce, startTraffic, type TrafficPair } from './soak-traffic.js';
import type { ProxiesCommand, ProxiesReport, ProxiesStatus } from './xds-proxies.js';
import { errorMessage } from '../runtime/index.js';
import { waitFor } from '../testing/wait-for.js';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} needs a non-negative number, got ${process.argv[index + 1]}`);
  return value;
}

const MINUTES = flag('minutes', 10);
const PROXIES = flag('proxies', 200);
const RPS = flag('rps', 40);
const INTERVAL_S = flag('interval', MINUTES >= 5 ? 30 : 10);
const WARMUP_MIN = flag('warmup', Math.min(2, MINUTES / 4));
const STEP_S = flag('step', 5);
const GRACE_S = flag('grace', 3);
const VERBOSE = process.argv.includes('--verbose');
const SHORT_TYPES: Record<string, string> = { [CLUSTER_TYPE]: 'cds', [ENDPOINT_TYPE]: 'eds', [LISTENER_TYPE]: 'lds', [ROUTE_TYPE]: 'rds' };

function startProxies(): {
  child: ChildProcess;
  next<K extends ProxiesReport['kind']>(kind: K, timeoutMs: number): Promise<Extract<ProxiesReport, { kind: K }>>;
  send(command: ProxiesCommand): void;
} {
  const child = fork(fileURLToPath(new URL('./xds-proxies.js', import.meta.url)), [], { stdio: 'inherit' });
  const waiting: { kind: string; resolve: (report: ProxiesReport) => void }[] = [];
  child.on('message', (report: ProxiesReport) => {
    const index = waiting.findIndex((entry) => entry.kind === report.kind);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve(report);
  });
  return {
    child,
    next: (kind, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the simulated proxies sent no ${kind} report within ${timeoutMs} ms`)), timeoutMs);
        waiting.push({ kind, resolve: (report) => (clearTimeout(timer), resolve(report as never)) });
      }),
    send: (command) => child.send(command),
  };
}

/** The processes watched: the daemon, each agent and its data plane, the simulated proxies; with where their metrics are. */
function watched(mesh: LocalMesh, proxiesPid: number | undefined): { name: string; pid: number; metrics?: string }[] {
  const out: { name: string; pid: number; metrics?: string }[] = [];
  for (const { name, pid } of mesh.processes()) {
    if (name === 'meshd') {
      out.push({ name, pid, metrics: `http://127.0.0.1:${mesh.daemon.monitoringPort}/metrics` });
      continue;
    }
    const workload = mesh.workloads.find((candidate) => `${candidate.namespace}/${candidate.name}` === name);
    out.push({ name: `${name} agent`, pid, ...(workload ? { metrics: `http://${workload.podIp}:15021/stats/prometheus` } : {}) });
    for (const child of childrenOf(pid))
      out.push({ name: `${name} dp`, pid: child, ...(workload ? { metrics: `http://${workload.podIp}:15000/stats/prometheus` } : {}) });
  }
  if (proxiesPid !== undefined) out.push({ name: `simulated proxies (${PROXIES})`, pid: proxiesPid });
  return out;
}

async function main(): Promise<number> {
  console.log(
    `soak: ${MINUTES} min, ${PROXIES} simulated proxies, ${RPS} requests/s, a churn step every ${STEP_S} s, figures every ${INTERVAL_S} s, slopes after ${WARMUP_MIN} min of warm-up; Node ${process.version}, load average at start ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const workDir = mkdtempSync(join(tmpdir(), 'mesh-soak-'));
  const mesh = await startLocalMesh({
    workDir,
    debounce: '100ms',
    addressBlock: 77,
    log: VERBOSE ? (line) => console.log(line) : (line) => void (/\t(warn|error)\t/.test(line) && console.log(line)),
  });
  const proxies = startProxies();
  let broken = false;
  proxies.child.once('exit', (code) => {
    if (code !== 0) {
      broken = true;
      console.error(`the simulated proxies exited with ${code}`);
    }
  });
  try {
    await mesh.waitReady(90_000);
    const sleepOf = (namespace: string): string => mesh.proxyOf(namespace);
    const pairs: TrafficPair[] = [
      { from: 'foo', to: 'foo', proxy: sleepOf('foo') },
      { from: 'foo', to: 'bar', proxy: sleepOf('foo') },
      { from: 'bar', to: 'bar', proxy: sleepOf('bar') },
      { from: 'bar', to: 'foo', proxy: sleepOf('bar') },
    ];
    const probeAgent = new Agent();
    for (const pair of pairs) {
      // The server sidecar adds the client's certificate: proof the hop was mutual TLS.
      await waitFor(async () => (await requestOnce(pair, probeAgent, 5_000, 'X-Forwarded-Client-Cert')) === 'ok', {
        timeoutMs: 30_000,
        intervalMs: 100,
        description: `${pair.from} → ${pair.to} answering 200 over mutual TLS`,
      });
    }
    probeAgent.destroy();
    const pods = Array.from({ length: PROXIES }, (_, i) => ({
      name: `sim-${i}`,
      namespace: i % 2 === 0 ? 'foo' : 'bar',
      ip: `10.250.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    }));
    const synced = proxies.next('synced', 120_000);
    proxies.send({
      cmd: 'connect',
      from: 0,
      to: PROXIES,
      port: mesh.daemon.grpcPort,
      edsNames: [],
      routeNames: [],
      types: [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE],
      pods,
      follow: true,
    });
    const report = await synced;
    console.log(
      `simulated proxies: ${report.proxies} synced (CDS, EDS, LDS, RDS ACKed), ${report.refused} streams refused on the way (the daemon admits new streams at a bounded rate; refused ones reconnect with backoff)`,
    );
    return await soak(mesh, proxies, pairs, () => broken);
  } finally {
    if (proxies.child.connected) proxies.send({ cmd: 'exit' });
    await mesh.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function soak(mesh: LocalMesh, proxies: ReturnType<typeof startProxies>, pairs: TrafficPair[], isBroken: () => boolean): Promise<number> {
  const start = Date.now();
  const minute = (): number => (Date.now() - start) / 60_000;
  const windows: DenyWindow[] = [];
  const traffic = startTraffic({ pairs, ratePerSecond: RPS, windows, graceMs: GRACE_S * 1000, timeoutMs: 10_000, maxInFlight: 500, now: Date.now });
  const steps = churnCycle();
  let stepIndex = 0;
  let lastStep = '-';
  let churnError: string | undefined;
  let churnTimer: NodeJS.Timeout | undefined;
  const churn = async (): Promise<void> => {
    const step = steps[stepIndex % steps.length]!;
    const round = Math.floor(stepIndex / steps.length);
    stepIndex++;
    try {
      await step.run(mesh, round);
    } catch (error) {
      churnError = `${step.name}: ${errorMessage(error)}`;
    }
    if (step.deny === 'start') windows.push({ policy: 'soak-deny', fromNamespace: DENY_FROM, toNamespace: DENY_TO, startAt: Date.now() });
    const open = windows.find((window) => window.endAt === undefined);
    if (step.deny === 'end' && open) open.endAt = Date.now();
    lastStep = step.name;
    churnTimer = setTimeout(() => void churn(), STEP_S * 1000);
  };
  churnTimer = setTimeout(() => void churn(), STEP_S * 1000);

  const series = newSeries();
  let before = { traffic: traffic.counts(), pushes: {} as Record<string, number>, responses: {} as Record<string, number> };
  const sample = async (): Promise<void> => {
    const at = minute();
    const daemon = await scrape(`http://127.0.0.1:${mesh.daemon.monitoringPort}/metrics`);
    proxies.send({ cmd: 'status' });
    const status: ProxiesStatus | undefined = await proxies.next('status', 10_000).catch(() => undefined);
    const rows: { name: string; sample: ProcessSample }[] = [];
    for (const process of watched(mesh, proxies.child.pid)) {
      const metrics = process.metrics ? await scrape(process.metrics) : undefined;
      const point: ProcessSample = { ...procSample(process.pid), ...heapAndHandles(metrics) };
      rows.push({ name: process.name, sample: point });
      series.add(process.name, { minute: at, ...point });
    }
    const now = traffic.counts();
    const pushes = daemon ? byLabel(daemon, 'pilot_xds_pushes', 'type') : {};
    const rejects = daemon ? byLabel(daemon, 'pilot_total_xds_rejects', 'type') : {};
    const connections = daemon ? sumOf(daemon, 'pilot_xds') : undefined;
    const responses = Object.fromEntries(Object.entries(status?.responses ?? {}).map(([type, count]) => [SHORT_TYPES[type] ?? type, count]));
    console.log(
      `\n[${clock(at)}] load ${loadavg()[0]?.toFixed(2)} | requests +${now.sent - before.traffic.sent} (total ${now.sent}): ok ${now.ok}, failures outside deny windows ${now.failuresOutside}, denied inside ${now.deniedInside}, other failures inside ${now.otherInside}, skipped ${now.skipped} | churn: ${stepIndex} steps, last '${lastStep}'${churnError ? `, error: ${churnError}` : ''}`,
    );
    console.log(
      `  xDS: ${connections ?? '-'} connections (simulated open ${status?.open ?? '-'}, stream ends ${status?.streamEnds ?? '-'}); pushes +(${counts(delta(pushes, before.pushes))}) total (${counts(pushes)}); NACKs total (${counts(rejects)}); simulated proxies received +(${counts(delta(responses, before.responses))})`,
    );
    console.log(processTable(rows));
    before = { traffic: now, pushes, responses };
  };

  await sample();
  const endAt = start + MINUTES * 60_000;
  while (Date.now() < endAt && !isBroken()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(INTERVAL_S * 1000, Math.max(0, endAt - Date.now()))));
    await sample();
  }
  clearTimeout(churnTimer);
  await traffic.stop();
  const final = traffic.counts();
  console.log(
    `\n=== soak summary: ${clock(minute())} min, load average at end ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} (2 cores, shared) ===`,
  );
  console.log(
    `requests: sent ${final.sent}, ok ${final.ok}, failures outside deny windows ${final.failuresOutside} (goal 0), denied inside ${final.deniedInside}, other failures inside ${final.otherInside}, skipped ${final.skipped}`,
  );
  for (const failure of traffic.failures().slice(0, 10))
    console.log(`  failure at ${clock((failure.at - start) / 60_000)} ${failure.pair}: ${failure.outcome}`);
  const denied = windows.map((window) => ({ window, ...traffic.deniedIn(window) }));
  const lags = denied.filter((entry) => entry.firstAt !== undefined).map((entry) => (entry.firstAt as number) - entry.window.startAt);
  const tails = denied
    .filter((entry) => entry.lastAt !== undefined && entry.window.endAt !== undefined)
    .map((entry) => (entry.lastAt as number) - (entry.window.endAt as number));
  console.log(
    `deny windows: ${windows.length}, with denials ${denied.filter((entry) => entry.count > 0).length}; first denial after the apply: max ${lags.length ? Math.max(...lags) : '-'} ms; last denial after the removal: max ${tails.length ? Math.max(...tails) : '-'} ms (grace ${GRACE_S * 1000} ms)`,
  );
  console.log(
    `churn: ${stepIndex} steps (${Math.floor(stepIndex / steps.length)} full cycles of ${steps.length})${churnError ? `; last error: ${churnError}` : ''}`,
  );
  console.log(`memory and handles (slopes by least squares after ${WARMUP_MIN} min of warm-up; goal flat):`);
  console.log(summaryTable(series, WARMUP_MIN));
  for (const file of CHURN_FILES) await mesh.remove(file);
  return isBroken() ? 1 : 0;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`the soak harness broke: ${error instanceof Error ? (error.stack ?? String(error)) : String(error)}`);
  return 1;
});
process.exit();
