/**
 * Data-plane benchmark (issue 20, item 5): HTTP requests through a client sidecar and a server
 * sidecar (embedded data planes, mutual TLS between them, jwt_authn with a valid RS256 token, an
 * RBAC ALLOW policy on the peer identity and the token) against the same client calling the
 * backend directly. The backend and each sidecar run in a process of their own, so that each hop's
 * CPU is its own. Prints, with the goals beside them:
 *   - saturation (closed loop) of both paths and their ratio;
 *   - the two sidecars' added p99 (against direct at the same rate, the two in alternating
 *     one-second slices) at 25 % and 50 % of their own saturation measured in the same run;
 *   - CPU per request per hop beside the reference's published 0.2 vCPU per 1000 requests per
 *     second per proxy (200 µs per request per proxy);
 *   - the load average before and after.
 * Never passes or fails.
 *
 *   npm run bench:dataplane [-- seconds] [--profile dir]
 *
 * `--profile dir` writes CPU profiles of both sidecars over the two sidecars' saturation phase
 * (`dir/client.cpuprofile`, `dir/server.cpuprofile`; sampled every 200 µs).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { meshAddresses, newMeshSecrets, SIDECAR_IDENTITIES } from '../dataplane/testing/two-sidecars-fixture.js';
import type { MeshPart, PartCommand, PartMessage } from './dataplane-mesh.js';

const args = process.argv.slice(2);
const profileAt = args.indexOf('--profile');
const PROFILE_DIR = profileAt >= 0 ? args[profileAt + 1] : undefined;
const SECONDS = Number(args.find((arg, index) => /^\d+(\.\d+)?$/.test(arg) && index !== profileAt + 1) ?? 5);
const CONCURRENCY = 32;
const SUBNET = 71;
const ISSUER = 'testing@secure.mesh.io';
/** The reference's performance page: 0.2 vCPU per 1000 requests per second per proxy. */
const REFERENCE_CPU_PER_REQUEST_US = 200;
const LOADS = [
  { share: 0.25, goalMs: 2 },
  { share: 0.5, goalMs: 10 },
] as const;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

interface Target {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
}

function targetOf(url: string, viaProxy: boolean, token: string): Target {
  const parsed = new URL(url);
  return viaProxy
    ? {
        host: parsed.hostname,
        port: Number(parsed.port),
        path: 'http://httpbin.bar:8000/headers',
        headers: { host: 'httpbin.bar:8000', authorization: `Bearer ${token}` },
      }
    : { host: parsed.hostname, port: Number(parsed.port), path: '/headers', headers: { authorization: `Bearer ${token}` } };
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

/** One request; a failure (a status other than 200, a reset) is counted, not thrown. */
function once(target: Target, failures: string[]): Promise<void> {
  return new Promise((resolve) => {
    const failed = (why: string): void => {
      failures.push(why);
      resolve();
    };
    const req = request({ host: target.host, port: target.port, path: target.path, headers: target.headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 500) body += chunk;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve() : failed(`status ${res.statusCode}: ${body}`)));
      res.on('error', (error) => failed(error.message));
    });
    req.on('error', (error) => failed(error.message));
    req.end();
  });
}

/** Open loop at a fixed rate: latency counted from each request's scheduled start. */
async function fixedRate(target: Target, rate: number, seconds: number, failures: string[]): Promise<number[]> {
  const latencies: number[] = [];
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    // Late requests count from when they were due (no coordinated omission); early ones from when sent.
    const sent = Math.min(due, performance.now());
    pending.push(once(target, failures).then(() => void latencies.push(performance.now() - sent)));
  }
  await Promise.all(pending);
  return latencies;
}

/** Closed loop with CONCURRENCY workers: requests per second. */
async function saturation(target: Target, failures: string[]): Promise<{ rps: number; count: number }> {
  let count = 0;
  const end = performance.now() + SECONDS * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await once(target, failures);
      count++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { rps: count / ((performance.now() - started) / 1000), count };
}

/** CPU time in µs: all of it, and the part spent in the kernel (system calls: the sockets' reads and writes). */
interface CpuTime {
  readonly total: number;
  readonly system: number;
}

interface Part {
  readonly ready: Promise<Extract<PartMessage, { kind: 'ready' }>>;
  cpuMicros(): Promise<CpuTime>;
  send(command: PartCommand): void;
  exit(): Promise<void>;
}

function startPart(part: MeshPart, setup: Omit<Extract<PartCommand, { cmd: 'start' }>['setup'], 'part'>): Part {
  const child: ChildProcess = fork(fileURLToPath(new URL('./dataplane-mesh.js', import.meta.url)), [], { stdio: 'inherit' });
  // A benchmark that dies leaves no part of the mesh behind.
  process.once('exit', () => child.kill());
  const waiters: ((message: PartMessage) => void)[] = [];
  child.on('message', (message: PartMessage) => waiters.shift()?.(message));
  const next = (): Promise<PartMessage> => new Promise((resolve) => waiters.push(resolve));
  const ready = next() as Promise<Extract<PartMessage, { kind: 'ready' }>>;
  child.send({ cmd: 'start', setup: { ...setup, part } } satisfies PartCommand);
  return {
    ready,
    send: (command) => void child.send(command),
    async cpuMicros() {
      const answer = next();
      child.send({ cmd: 'cpu' } satisfies PartCommand);
      const { user, system } = (await answer) as Extract<PartMessage, { kind: 'cpu' }>;
      return { total: user + system, system };
    },
    exit: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ cmd: 'exit' } satisfies PartCommand);
      }),
  };
}

type CpuSnapshot = Record<MeshPart, CpuTime>;

async function cpuNow(parts: Readonly<Record<MeshPart, Part>>): Promise<CpuSnapshot> {
  const names = Object.keys(parts) as MeshPart[];
  const times = await Promise.all(names.map((name) => parts[name].cpuMicros()));
  return Object.fromEntries(names.map((name, index) => [name, times[index] as CpuTime])) as CpuSnapshot;
}

/** `total` plus the CPU spent between two snapshots. */
function addSpent(total: CpuSnapshot, before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  const sum = (name: MeshPart, field: keyof CpuTime): number => total[name][field] + after[name][field] - before[name][field];
  return Object.fromEntries(
    (Object.keys(total) as MeshPart[]).map((name) => [name, { total: sum(name, 'total'), system: sum(name, 'system') }]),
  ) as CpuSnapshot;
}

function perRequest(spent: CpuSnapshot, count: number): CpuSnapshot {
  return Object.fromEntries(
    (Object.keys(spent) as MeshPart[]).map((name) => [name, { total: spent[name].total / count, system: spent[name].system / count }]),
  ) as CpuSnapshot;
}

const NO_CPU: CpuSnapshot = { backend: { total: 0, system: 0 }, server: { total: 0, system: 0 }, client: { total: 0, system: 0 } };

/** CPU of each part over `phase`, in µs per request. */
async function cpuPerRequest<T extends { count: number }>(
  parts: Readonly<Record<MeshPart, Part>>,
  phase: () => Promise<T>,
): Promise<T & { cpuUs: CpuSnapshot }> {
  const before = await cpuNow(parts);
  const result = await phase();
  return { ...result, cpuUs: perRequest(addSpent(NO_CPU, before, await cpuNow(parts)), result.count) };
}

/**
 * Direct and two sidecars at the same rate, in alternating one-second slices (SECONDS of each), so
 * that both see the same neighbours on a shared machine; the sidecars' CPU over their slices.
 */
async function pairedRate(
  parts: Readonly<Record<MeshPart, Part>>,
  direct: Target,
  meshed: Target,
  rate: number,
  failures: { direct: string[]; meshed: string[] },
): Promise<{ direct: number[]; meshed: number[]; cpuUs: CpuSnapshot }> {
  const latencies = { direct: [] as number[], meshed: [] as number[] };
  let spent = NO_CPU;
  for (let slice = 0; slice < Math.max(1, Math.round(SECONDS)); slice++) {
    latencies.direct.push(...(await fixedRate(direct, rate, 1, failures.direct)));
    const before = await cpuNow(parts);
    latencies.meshed.push(...(await fixedRate(meshed, rate, 1, failures.meshed)));
    spent = addSpent(spent, before, await cpuNow(parts));
  }
  return { ...latencies, cpuUs: perRequest(spent, latencies.meshed.length) };
}

const loadText = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const ms = (value: number): string => `${value.toFixed(2)} ms`;
const us = (cpu: CpuTime): string => `${cpu.total.toFixed(0)} µs (system ${cpu.system.toFixed(0)})`;
const hops = (cpuUs: CpuSnapshot): string =>
  `client sidecar ${us(cpuUs.client)}, server sidecar ${us(cpuUs.server)} (reference ${REFERENCE_CPU_PER_REQUEST_US} µs per proxy: ${(cpuUs.client.total / REFERENCE_CPU_PER_REQUEST_US).toFixed(2)}× and ${(cpuUs.server.total / REFERENCE_CPU_PER_REQUEST_US).toFixed(2)}×); backend ${us(cpuUs.backend)}`;

async function main(): Promise<void> {
  const wall = performance.now();
  console.log(`data-plane benchmark: ${SECONDS} s per phase, Node ${process.version}, ${cpus().length} cores, load average ${loadText()} at start`);
  const pair = await generateKeyPair('RS256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] });
  const token = await new SignJWT({ sub: 'bench' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setExpirationTime('2h')
    .sign(pair.privateKey);
  const secretsFor = await newMeshSecrets();
  const setupFor = (identity: string): Omit<Extract<PartCommand, { cmd: 'start' }>['setup'], 'part'> => {
    const secrets = secretsFor(identity);
    const certificate = secrets.certificates.get('default');
    return {
      subnet: SUBNET,
      certificateChain: certificate?.certificateChain ?? '',
      privateKey: certificate?.privateKey ?? '',
      rootPem: secrets.trustedCas.get('ROOTCA') ?? '',
      issuer: ISSUER,
      jwks,
    };
  };
  const parts: Record<MeshPart, Part> = {
    backend: startPart('backend', setupFor(SIDECAR_IDENTITIES.server)),
    server: startPart('server', setupFor(SIDECAR_IDENTITIES.server)),
    client: startPart('client', setupFor(SIDECAR_IDENTITIES.client)),
  };
  const [, , client] = await Promise.all([parts.backend.ready, parts.server.ready, parts.client.ready]);
  const direct = targetOf(meshAddresses(SUBNET).directUrl, false, token);
  const meshed = targetOf(client.proxyUrl ?? '', true, token);
  console.log(
    'the backend, the server sidecar (mutual TLS + jwt_authn + RBAC) and the client sidecar each in a process of their own; the load generator in this one',
  );
  // Warm up to steady state: connection pools (and their TLS handshakes) at the concurrency the phases reach.
  const warmUpFailures: string[] = [];
  for (const target of [direct, meshed]) {
    for (let round = 0; round < 100; round++) await Promise.all(Array.from({ length: CONCURRENCY }, () => once(target, warmUpFailures)));
  }
  if (warmUpFailures.length > 0) throw new Error(`warm-up: ${warmUpFailures.length} requests failed, the first: ${warmUpFailures[0]}`);

  const failures: Record<string, string[]> = {};
  const failuresOf = (phase: string): string[] => (failures[phase] = []);
  const directSaturation = await saturation(direct, failuresOf('direct saturation'));
  const sidecars = [parts.client, parts.server] as const;
  if (PROFILE_DIR) sidecars.forEach((part, index) => part.send({ cmd: 'profile', dir: PROFILE_DIR, name: index === 0 ? 'client' : 'server' }));
  const meshedSaturation = await cpuPerRequest(parts, () => saturation(meshed, failuresOf('two sidecars saturation')));
  if (PROFILE_DIR) sidecars.forEach((part) => part.send({ cmd: 'profile-end' }));
  const ratio = meshedSaturation.rps / directSaturation.rps;
  console.log(
    `saturation (closed loop, concurrency ${CONCURRENCY}): direct ${directSaturation.rps.toFixed(0)} rps, two sidecars ${meshedSaturation.rps.toFixed(0)} rps → ratio ${ratio.toFixed(3)} (goal ≥ 0.25; at filing 2,136 ÷ 19,537 = 0.11)`,
  );
  console.log(`  CPU per request at saturation: ${hops(meshedSaturation.cpuUs)}`);
  for (const { share, goalMs } of LOADS) {
    const rate = Math.max(1, Math.round(share * meshedSaturation.rps));
    const run = await pairedRate(parts, direct, meshed, rate, {
      direct: failuresOf(`direct at ${rate} rps`),
      meshed: failuresOf(`two sidecars at ${rate} rps`),
    });
    const added = percentile(run.meshed, 99) - percentile(run.direct, 99);
    const row = (latencies: readonly number[]): string =>
      `p50 ${ms(percentile(latencies, 50))}, p90 ${ms(percentile(latencies, 90))}, p99 ${ms(percentile(latencies, 99))}, max ${ms(percentile(latencies, 100))}`;
    console.log(
      `at ${share * 100} % of the two sidecars' saturation (${rate} rps, open loop, alternating 1 s slices): direct ${row(run.direct)}; two sidecars ${row(run.meshed)}`,
    );
    console.log(
      `  added p99 ${ms(added)} (goal ≤ ${goalMs} ms; at filing +329 ms at 1000 rps = 47 %); CPU per request: ${hops(run.cpuUs)}; load average ${loadText()}`,
    );
  }
  for (const [phase, failed] of Object.entries(failures))
    if (failed.length > 0) console.log(`FAILED: ${phase}: ${failed.length} requests, the first: ${failed[0]}`);
  await Promise.all(Object.values(parts).map((part) => part.exit()));
  agent.destroy();
  console.log(`load average ${loadText()} at the end; ${((performance.now() - wall) / 1000).toFixed(0)} s in all`);
}

await main();
