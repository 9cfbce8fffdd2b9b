/**
 * Data-plane benchmark: requests through a client sidecar and a server sidecar (embedded data
 * planes, mutual TLS, jwt_authn with a valid token, an RBAC ALLOW policy on the peer identity and
 * the token) against the same client calling the backend directly. Prints requests per second
 * and added latency (p50, p99) at a fixed 1000 requests per second and at saturation, and the
 * sidecars' CPU per request. Never passes or fails.
 *
 *   npm run bench:dataplane [-- seconds]
 */
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { MeshMessage } from './dataplane-mesh.js';

const SECONDS = Number(process.argv[2] ?? 5);
const RATE = 1000;
const CONCURRENCY = 32;

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
    ? { host: parsed.hostname, port: Number(parsed.port), path: 'http://httpbin.bar:8000/headers', headers: { host: 'httpbin.bar:8000', authorization: `Bearer ${token}` } }
    : { host: parsed.hostname, port: Number(parsed.port), path: '/headers', headers: { authorization: `Bearer ${token}` } };
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY * 2 });

function once(target: Target): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: target.host, port: target.port, path: target.path, headers: target.headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 500) body += chunk;
      });
      res.on('end', () => (res.statusCode === 200 ? resolve(res.statusCode) : reject(new Error(`status ${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Open loop at a fixed rate: latency counted from each request's scheduled start. */
async function fixedRate(target: Target): Promise<number[]> {
  const latencies: number[] = [];
  const total = RATE * SECONDS;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    // Late requests count from when they were due (no coordinated omission); early ones from when sent.
    const sent = Math.min(due, performance.now());
    pending.push(once(target).then(() => void latencies.push(performance.now() - sent)));
  }
  await Promise.all(pending);
  return latencies;
}

/** Closed loop with CONCURRENCY workers: requests per second. */
async function saturation(target: Target): Promise<{ rps: number; count: number }> {
  let count = 0;
  const end = performance.now() + SECONDS * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await once(target);
      count++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { rps: count / ((performance.now() - started) / 1000), count };
}

async function main(): Promise<void> {
  const child = fork(fileURLToPath(new URL('./dataplane-mesh.js', import.meta.url)), [], { stdio: 'inherit' });
  const messages: MeshMessage[] = [];
  const waiters: ((message: MeshMessage) => void)[] = [];
  child.on('message', (message: MeshMessage) => {
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else messages.push(message);
  });
  const next = (): Promise<MeshMessage> => new Promise((resolve) => (messages.length > 0 ? resolve(messages.shift() as MeshMessage) : waiters.push(resolve)));
  const cpu = async (): Promise<number> => {
    child.send({ cmd: 'cpu' });
    return ((await next()) as Extract<MeshMessage, { kind: 'cpu' }>).micros;
  };
  const ready = (await next()) as Extract<MeshMessage, { kind: 'ready' }>;
  const direct = targetOf(ready.directUrl, false, ready.token);
  const meshed = targetOf(ready.proxyUrl, true, ready.token);
  console.log(`data-plane benchmark: ${SECONDS} s per phase, Node ${process.version}; mutual TLS + jwt_authn + RBAC on the server sidecar`);
  // Warm up to steady state: connection pools (and their TLS handshakes) at the concurrency the phases reach.
  for (const target of [direct, meshed]) {
    for (let round = 0; round < 100; round++) await Promise.all(Array.from({ length: 16 }, () => once(target)));
  }

  const results: Record<string, { p50: number; p99: number; rps: number; cpuPerRequestUs: number }> = {};
  for (const [name, target] of [['direct', direct], ['two sidecars', meshed]] as const) {
    const latencies = await fixedRate(target);
    const before = await cpu();
    const { rps, count } = await saturation(target);
    const cpuPerRequestUs = ((await cpu()) - before) / count;
    results[name] = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps, cpuPerRequestUs };
    console.log(`${name}: at ${RATE} rps p50 ${percentile(latencies, 50).toFixed(2)} ms, p90 ${percentile(latencies, 90).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, max ${percentile(latencies, 100).toFixed(2)} ms; saturation ${rps.toFixed(0)} rps (concurrency ${CONCURRENCY}); mesh-process CPU ${cpuPerRequestUs.toFixed(0)} µs per request`);
  }
  const d = results['direct'];
  const m = results['two sidecars'];
  if (d && m) {
    const sidecarCpuUs = m.cpuPerRequestUs - d.cpuPerRequestUs;
    console.log(`added by two sidecars at ${RATE} rps: p50 ${(m.p50 - d.p50).toFixed(2)} ms, p99 ${(m.p99 - d.p99).toFixed(2)} ms (goal p99 ≤ 2 ms; anchor: Envoy adds about 0.23 ms p90 and 0.30 ms p99 for two hops)`);
    console.log(`sidecar CPU per request (both hops): ${sidecarCpuUs.toFixed(0)} µs → ${(1e6 / sidecarCpuUs).toFixed(0)} requests per second per core through two sidecars (goal ≥ 3000)`);
  }
  child.send({ cmd: 'exit' });
  agent.destroy();
}

await main();
