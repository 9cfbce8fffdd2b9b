/**
 * xDS benchmark: prints figures with their goals and anchors beside them, never passes or fails.
 *
 *   - memory with 1000 services and no proxies;
 *   - 1000 proxies connecting at once, each receiving full config (CDS, EDS, LDS, RDS) for 1000
 *     services: wall time to the last ACK, daemon CPU, refusals, and bytes pushed per daemon
 *     CPU-second against a raw grpc-js fan-out of the same bytes measured in the same run;
 *   - one endpoint change with 1000 proxies: event to each proxy's EDS ACK (the 100 ms debounce
 *     included), p50/p99 over the proxies and over repeated changes, and the bytes sent, against a
 *     raw grpc-js push of the same bytes to 1000 open streams measured in the same run;
 *   - the connection storm and the endpoint changes once per protocol: state of the world, then
 *     delta xDS (the proxies of one protocol leave before the other's connect);
 *   - RSS per extra proxy between 1000 and 2000 connected proxies (the last protocol's).
 *
 * The daemon side (model, push context, generators, ADS server) runs in this process; the
 * simulated proxies are grpc-js ADS clients in a child process.
 *
 *   npm run bench:xds [-- proxies services changes throttle] [--sotw | --delta]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { newMeshModel, serviceFromObject, workloadFromPod, type MeshModelWriter } from '../controllers/index.js';
import { newMetrics, newNopLogger, newRealClock } from '../controllers/runtime/index.js';
import { buildPushContext, newSidecarCdsGenerator, type PushContext } from '../xds/generators/index.js';
import { newMeshGenerators } from '../xds/mesh-generators.js';
import { loadEnvoyProtos, newXdsServer, parseProxy, jsonToStruct, LISTENER_TYPE, SECRET_TYPE, type Generator } from '../xds/index.js';
import { rawFanoutBytesPerCpuSecond, rawPushTimes, type ProxiesChild } from './xds-fanout.js';
import type { ConnectCommand, ProxiesReport } from './xds-proxies.js';

const ARGS = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const PROXIES = Number(ARGS[0] ?? 1000);
const SERVICES = Number(ARGS[1] ?? 1000);
const CHANGES = Number(ARGS[2] ?? 20);
// PILOT_PUSH_THROTTLE; 100 is the setting's default.
const PUSH_THROTTLE = Number(ARGS[3] ?? 100);
const DEBOUNCE_MS = 100;
type Protocol = 'sotw' | 'delta';
const PROTOCOLS: readonly Protocol[] = process.argv.includes('--delta') ? ['delta'] : process.argv.includes('--sotw') ? ['sotw'] : ['sotw', 'delta'];
const PROTOCOL_NAME: Readonly<Record<Protocol, string>> = { sotw: 'state of the world', delta: 'delta' };
const NAMESPACES = 20;
const PORTS = [80, 8080, 9080, 5000, 3000, 8000, 7070, 15000 - 1, 443, 6379];
const DOMAIN = 'cluster.local';

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} kB`;
const ms = (value: number): string => `${value.toFixed(0)} ms`;
const now = (): number => performance.timeOrigin + performance.now();

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

interface Pod {
  name: string;
  namespace: string;
  ip: string;
  app: string;
}

/** Service i in namespace i % 20 with one port, selecting two pods. */
function fillModel(model: MeshModelWriter): Pod[] {
  const pods: Pod[] = [];
  for (let i = 0; i < SERVICES; i++) {
    const namespace = `ns-${i % NAMESPACES}`;
    const port = PORTS[i % PORTS.length] as number;
    const app = `svc-${i}`;
    const service = serviceFromObject(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: app, namespace },
        spec: { clusterIP: `10.96.${Math.floor(i / 250)}.${i % 250}`, selector: { app }, ports: [{ name: `http-${port}`, port, targetPort: 8000 + (i % 7) }] },
      },
      DOMAIN,
    );
    if (!service) throw new Error(`bad service ${app}`);
    model.registry.applyService(service);
    for (let replica = 0; replica < 2; replica++) {
      const pod: Pod = { name: `${app}-${replica}`, namespace, ip: `10.${1 + replica}.${Math.floor(i / 250)}.${i % 250}`, app };
      pods.push(pod);
      applyPod(model, pod);
    }
  }
  return pods;
}

function applyPod(model: MeshModelWriter, pod: Pod): ReturnType<MeshModelWriter['registry']['applyWorkload']> {
  const workload = workloadFromPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod.name, namespace: pod.namespace, labels: { app: pod.app }, annotations: { 'sidecar.mesh.io/status': '{}' } },
      spec: { serviceAccountName: pod.app, containers: [{ name: 'app', ports: [{ containerPort: 8000 }] }] },
      status: { podIP: pod.ip, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    },
    'cluster-a',
  );
  if (!workload) throw new Error(`bad pod ${pod.name}`);
  return model.registry.applyWorkload(workload);
}

function startChild(): ProxiesChild & { child: ChildProcess } {
  const child = fork(fileURLToPath(new URL('./xds-proxies.js', import.meta.url)), [], { stdio: 'inherit', execArgv: ['--max-old-space-size=8192'] });
  const waiting: { kind: string; resolve: (report: ProxiesReport) => void }[] = [];
  child.on('message', (report: ProxiesReport) => {
    const index = waiting.findIndex((entry) => entry.kind === report.kind);
    if (index >= 0) waiting.splice(index, 1)[0]?.resolve(report);
  });
  return {
    child,
    next: (kind) => new Promise((resolve) => waiting.push({ kind, resolve })),
    send: (command) => child.send(command),
  };
}

/** Names a sidecar subscribes to by name: every EDS cluster of CDS, every route of LDS. */
function subscriptionNames(generators: readonly Generator<PushContext>[], push: PushContext, pod: Pod): { edsNames: string[]; routeNames: string[] } {
  const proxy = parseProxy({ id: `sidecar~${pod.ip}~${pod.name}.${pod.namespace}~${pod.namespace}.svc.${DOMAIN}`, metadata: jsonToStruct({ NAMESPACE: pod.namespace }) });
  const request = { names: [], full: true, configsUpdated: [] };
  const resolve = (resource: object | (() => object)): Record<string, unknown> => (typeof resource === 'function' ? resource() : resource) as Record<string, unknown>;
  const clusters = (newSidecarCdsGenerator().generate(proxy, push, request)?.resources ?? []).map((named) => resolve(named.resource));
  const edsNames = clusters.filter((cluster) => cluster['type'] === 'EDS').map((cluster) => cluster['name'] as string);
  const lds = generators.find((generator) => generator.typeUrl === LISTENER_TYPE);
  const listeners = (lds?.generate(proxy, push, request)?.resources ?? []).map((named) => resolve(named.resource));
  const routeNames = new Set<string>(lds ? [] : PORTS.map(String));
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      const rds = (value as { rds?: { route_config_name?: string } }).rds;
      if (rds?.route_config_name) routeNames.add(rds.route_config_name);
      Object.values(value).forEach(visit);
    }
  };
  visit(listeners);
  return { edsNames, routeNames: [...routeNames].sort() };
}

/** What one protocol's endpoint changes gave. */
interface ChangeFigures {
  perProxy: number[];
  lastAck: number[];
  /** EDS bytes received by all proxies, per change. */
  bytes: number[];
  /** Responses of other types during the changes (there should be none). */
  others: number;
  /** The fewest proxies a change reached (all, unless streams dropped). */
  reached: number;
}

async function main(): Promise<void> {
  console.log(`xDS benchmark: ${PROXIES} proxies, ${SERVICES} services, ${CHANGES} endpoint changes, protocols: ${PROTOCOLS.map((protocol) => PROTOCOL_NAME[protocol]).join(', ')}, Node ${process.version}`);
  const loaded = loadEnvoyProtos();
  const encodes = new Map<string, { count: number; bytes: number }>();
  // Counts what the daemon encodes (cache misses), by type.
  const protos = {
    ...loaded,
    encodeAny(typeUrl: string, message: object) {
      const encoded = loaded.encodeAny(typeUrl, message);
      const entry = encodes.get(typeUrl) ?? { count: 0, bytes: 0 };
      entry.count++;
      entry.bytes += encoded.value.length;
      encodes.set(typeUrl, entry);
      return encoded;
    },
  };
  const model = newMeshModel({ domain: DOMAIN, clusterId: 'cluster-a', useEndpointSlices: false });
  const pods = fillModel(model);
  const generators = newMeshGenerators();
  const clock = newRealClock();
  const metrics = newMetrics('pilot-discovery');
  const xds = newXdsServer<PushContext>({
    protos,
    generators,
    buildPushContext: () => buildPushContext(model),
    tuning: { debounceAfterMs: DEBOUNCE_MS, debounceMaxMs: 10_000, enableEdsDebounce: true, pushThrottle: PUSH_THROTTLE, enableCache: true, cacheSize: 200_000, sendTimeoutMs: 0 },
    transport: { keepaliveIntervalMs: 30_000, keepaliveTimeoutMs: 10_000, maxConnectionAgeMs: 2 ** 53, maxRecvMsgSize: 4 * 1024 * 1024, maxStreams: 100_000 },
    grpcAddr: '127.0.0.1:0',
    clock,
    metrics,
    log: newNopLogger('ads'),
    // The storm measures generation and sending: the admission rate of new streams (the
    // daemon's default) would only spread the connections over 40 s.
    newStreamsPerSecond: 0,
  });
  const controller = new AbortController();
  const running = xds.runnables.map((runnable) => runnable.start(controller.signal));
  await xds.plaintext.waitForReady();
  const port = xds.plaintext.port();
  const push = buildPushContext(model);
  // A sidecar subscribes to CDS, EDS, LDS and RDS; secrets over ADS are the gateways'.
  const names = { ...subscriptionNames(generators, push, pods[0] as Pod), types: generators.map((generator) => generator.typeUrl).filter((type) => type !== SECRET_TYPE) };
  console.log(`each proxy subscribes to ${names.edsNames.length} EDS clusters and ${names.routeNames.length} routes`);

  gc();
  const idleRss = process.memoryUsage().rss;
  console.log(`\nmemory, ${SERVICES} services, no proxies: RSS ${mb(idleRss)} (goal ≤ 256 MB)`);

  const proxies = startChild();
  const proxyPods = (from: number, to: number): ConnectCommand['pods'] => {
    const out: ConnectCommand['pods'] = [];
    for (let i = 0; i < to; i++) {
      const pod = pods[(i % SERVICES) * 2 + Math.floor(i / SERVICES)] as Pod;
      out.push(i < from ? { name: '', namespace: '', ip: '' } : { name: pod.name, namespace: pod.namespace, ip: pod.ip });
    }
    return out;
  };
  let change = 0;
  let stormBytesPerProxy = 0;
  let stormBytesPerCpuSecond = 0;
  const figures = new Map<Protocol, ChangeFigures>();
  let rssAtProxies = 0;

  for (const protocol of PROTOCOLS) {
    const delta = protocol === 'delta';
    // 1000 proxies at once.
    encodes.clear();
    const readsBefore = await cacheReads(metrics);
    const cpuBefore = process.cpuUsage();
    const started = now();
    const synced = proxies.next('synced');
    proxies.send({ cmd: 'connect', from: 0, to: PROXIES, port, ...names, pods: proxyPods(0, PROXIES), delta });
    const report = (await synced) as Extract<ProxiesReport, { kind: 'synced' }>;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const wall = report.lastAckAt - started;
    const bytesPerCpuSecond = report.bytes / cpuSeconds;
    if (stormBytesPerProxy === 0) {
      stormBytesPerProxy = report.bytes / PROXIES;
      stormBytesPerCpuSecond = bytesPerCpuSecond;
    }
    console.log(`\n[${PROTOCOL_NAME[protocol]}] ${PROXIES} proxies connecting at once, full config for ${SERVICES} services:`);
    console.log(`  all ACKed in ${ms(wall)} wall (goal ≤ 12,000 ms), daemon CPU ${cpuSeconds.toFixed(2)} s (goal ≤ 8 s), refused ${report.refused} (goal 0); the simulated proxies' CPU ${report.cpuSeconds.toFixed(2)} s`);
    console.log(`  pushed ${mb(report.bytes)} (${mb(report.bytes / PROXIES)} per proxy), ${mb(bytesPerCpuSecond)} per daemon CPU-second`);
    console.log(`  anchor: the reference admits 25 new streams per second on 2 cores, about ${(PROXIES / 25).toFixed(0)} s for ${PROXIES}`);
    const reads = await cacheReads(metrics);
    console.log(`  encoded-resource cache: ${reads.hit - readsBefore.hit} hits, ${reads.miss - readsBefore.miss} misses; encoded: ${[...encodes.entries()].map(([type, entry]) => `${type.split('.').pop()} ${entry.count} (${mb(entry.bytes)})`).join(', ')}`);

    gc();
    await new Promise((resolve) => setTimeout(resolve, 500));
    gc();
    rssAtProxies = process.memoryUsage().rss;

    // Endpoint changes.
    const result: ChangeFigures = { perProxy: [], lastAck: [], bytes: [], others: 0, reached: PROXIES };
    for (let i = 0; i < CHANGES; i++, change++) {
      const index = (PROXIES * 2 + change) % pods.length;
      const moved: Pod = { ...(pods[index] as Pod), ip: `10.200.${change % 250}.${(change * 7) % 250}` };
      pods[index] = moved;
      proxies.send({ cmd: 'mark' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const eds = proxies.next('eds');
      const t0 = now();
      const applied = applyPod(model, moved);
      xds.configUpdate({
        full: false,
        reason: 'endpoint',
        configsUpdated: [...applied.endpointsChanged.map((key) => ({ kind: 'Service' as const, ...key })), { kind: 'Pod', namespace: moved.namespace, name: moved.name }],
        startedAt: clock.now(),
      });
      const got = (await eds) as Extract<ProxiesReport, { kind: 'eds' }>;
      const times = got.times.map((time) => time - t0);
      result.perProxy.push(...times);
      result.lastAck.push(Math.max(...times));
      result.bytes.push(got.bytes);
      result.others += got.others;
      result.reached = Math.min(result.reached, times.length);
    }
    figures.set(protocol, result);
    if (protocol !== PROTOCOLS[PROTOCOLS.length - 1]) {
      const closed = proxies.next('closed');
      proxies.send({ cmd: 'close' });
      await closed;
      await waitUntil(() => xds.discovery.connections().length === 0, 30_000, 'the proxies gone');
    }
  }

  // 1000 more proxies: memory per proxy.
  const last = PROTOCOLS[PROTOCOLS.length - 1] as Protocol;
  if (PROXIES * 2 <= SERVICES * 2) {
    const more = proxies.next('synced');
    proxies.send({ cmd: 'connect', from: PROXIES, to: PROXIES * 2, port, ...names, pods: proxyPods(PROXIES, PROXIES * 2), delta: last === 'delta' });
    await more;
    gc();
    await new Promise((resolve) => setTimeout(resolve, 500));
    gc();
    const rssAt2000 = process.memoryUsage().rss;
    console.log(`\nmemory (${PROTOCOL_NAME[last]}): RSS ${mb(rssAtProxies)} at ${PROXIES} proxies, ${mb(rssAt2000)} at ${PROXIES * 2}: ${((rssAt2000 - rssAtProxies) / PROXIES / 1024 / 1024).toFixed(3)} MB per extra proxy (goal ≤ 0.5 MB; the reference reports about 2 MB per sidecar at 1000 services)`);
  }
  const closed = proxies.next('closed');
  proxies.send({ cmd: 'close' });
  await closed;
  controller.abort();
  await Promise.allSettled(running);

  // The baselines, with the daemon stopped: raw grpc-js pushes of the same EDS bytes to as many
  // open streams, and a raw fan-out of the storm's bytes per proxy.
  const edsBytesPerProxy = PROTOCOLS.map((protocol) => median(figures.get(protocol)?.bytes ?? []) / PROXIES);
  const rawTimes = await rawPushTimes(proxies, PROXIES, edsBytesPerProxy);
  console.log(`\none endpoint change, ${PROXIES} proxies (debounce ${DEBOUNCE_MS} ms included), ${CHANGES} changes per protocol:`);
  PROTOCOLS.forEach((protocol, i) => {
    const result = figures.get(protocol) as ChangeFigures;
    const raw = rawTimes[i] as number;
    const goal = DEBOUNCE_MS + 2 * raw;
    const p50 = percentile(result.lastAck, 50);
    console.log(`  [${PROTOCOL_NAME[protocol]}]`);
    console.log(`    event → a proxy's EDS ACK: p50 ${ms(percentile(result.perProxy, 50))}, p99 ${ms(percentile(result.perProxy, 99))}`);
    console.log(`    event → last ACK of a change: p50 ${ms(p50)}, p99 ${ms(percentile(result.lastAck, 99))}; goal p50 ≤ debounce + 2 × raw push = ${ms(goal)}: ratio ${(p50 / goal).toFixed(2)} (goal ≤ 1)`);
    console.log(`    bytes sent per change: ${kb(median(result.bytes))} (${(median(result.bytes) / PROXIES).toFixed(0)} B per proxy); responses of other types: ${result.others}${result.reached < PROXIES ? `; a change reached only ${result.reached} proxies (streams dropped)` : ''}`);
    console.log(`    baseline: raw grpc-js push of ${(median(result.bytes) / PROXIES).toFixed(0)} B to ${PROXIES} open streams: ${ms(raw)} (median of 5)`);
  });
  console.log('  anchor: the reference claims endpoint updates to 500 sidecars in under 1 s');

  const rawPerCpuSecond = await rawFanoutBytesPerCpuSecond(proxies, PROXIES, stormBytesPerProxy);
  console.log(`\nraw grpc-js fan-out of the storm's bytes (${PROTOCOL_NAME[PROTOCOLS[0] as Protocol]}) to ${PROXIES} streams: ${mb(rawPerCpuSecond)} per CPU-second`);
  console.log(`  xDS bytes per daemon CPU-second / raw: ${(stormBytesPerCpuSecond / rawPerCpuSecond).toFixed(2)} (goal ≥ 0.5)`);
  proxies.send({ cmd: 'exit' });
  await new Promise((resolve) => proxies.child.once('exit', resolve));
}

async function cacheReads(metrics: ReturnType<typeof newMetrics>): Promise<{ hit: number; miss: number }> {
  const reads = (await metrics.registry.getSingleMetric('xds_cache_reads')?.get())?.values ?? [];
  const count = (result: string): number => reads.filter((value) => value.labels['type'] === result).reduce((sum, value) => sum + value.value, 0);
  return { hit: count('hit'), miss: count('miss') };
}

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

await main();
process.exit(0);
