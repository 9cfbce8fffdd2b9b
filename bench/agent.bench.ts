/**
 * Agent benchmark: start → first workload certificate served over SDS (ECDSA keys), over many
 * starts against an idle daemon, and the agent's steady RSS, beside a bare `node -e 0` start and
 * an idle bare Node's RSS measured in the same run. Prints figures, never passes or fails.
 *
 *   npm run bench:agent [-- starts]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { credentials } from '@grpc/grpc-js';
import { startTokenIssuer } from '../e2e/local-mesh/token-issuer.js';
import { loadEnvoyProtos, newDiscoveryClient, SECRET_TYPE } from '../xds/envoy/index.js';
import { processEnvironment } from '../runtime/index.js';

const STARTS = Number(process.argv[2] ?? 50);
/** When the agent's RSS counts as steady. */
const STEADY_AFTER_MS = 30_000;
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const protos = loadEnvoyProtos();

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

async function until<T>(check: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((done) => setTimeout(done, 2));
  }
}

/** Resolves when the SDS server on `socket` has served `default`. */
function firstSecret(socket: string): Promise<void> {
  return new Promise<void>((done, fail) => {
    const client = newDiscoveryClient({
      protos,
      service: 'sds',
      target: `unix:${socket}`,
      credentials: credentials.createInsecure(),
      node: { id: 'bench' },
      initial: [[SECRET_TYPE, ['default']]],
      onResponse(response) {
        if (response.resources.length > 0) {
          client.close();
          done();
        }
      },
      onStreamEnd({ error }) {
        if (error) fail(error);
      },
    });
    client.start();
  });
}

const rssKbOf = (pid: string | number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Bare Node: `node -e 0` from spawn to exit, STARTS times; and an idle Node's RSS after 3 s. */
async function bareNode(): Promise<{ p50: number; p99: number; idleRssKb: number }> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((done) => child.once('exit', done));
    times.push(performance.now() - started);
  }
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], { stdio: 'ignore' });
  await new Promise((done) => setTimeout(done, 3000));
  const idleRssKb = rssKbOf(idle.pid ?? 0);
  idle.kill('SIGTERM');
  await new Promise((done) => idle.once('exit', done));
  return { p50: percentile(times, 50), p99: percentile(times, 99), idleRssKb };
}

async function main(): Promise<void> {
  const bare = await bareNode();
  const work = mkdtempSync(join(tmpdir(), 'agent-bench-'));
  const issuer = await startTokenIssuer();
  const daemonDir = join(work, 'daemon');
  mkdirSync(join(daemonDir, 'config'), { recursive: true });
  const daemon = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/pilot-discovery.js'),
      'discovery',
      '--configDir',
      join(daemonDir, 'config'),
      '--grpcAddr',
      '127.0.0.1:0',
      '--secureGRPCAddr',
      '127.0.0.1:15712',
      '--httpAddr',
      '127.0.0.1:15780',
      '--monitoringAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--ctrlz_port',
      '0',
    ],
    {
      cwd: daemonDir,
      env: { PATH: processEnvironment()['PATH'] ?? '', JWT_RULE: issuer.jwtRule },
      stdio: 'ignore',
    },
  );
  try {
    await until(() => (existsSync(join(daemonDir, 'var/lib/mesh/ca/root-cert.pem')) ? true : undefined), 20_000);
    for (;;) {
      const ready = await fetch('http://127.0.0.1:15780/ready').then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((done) => setTimeout(done, 20));
    }
    const root = readFileSync(join(daemonDir, 'var/lib/mesh/ca/root-cert.pem'), 'utf8');
    const token = await issuer.workloadToken('foo', 'sleep');
    const times: number[] = [];
    let earlyRssKb = NaN;
    let rssKb = NaN;
    let dataPlaneRssKb = NaN;
    for (let i = 0; i < STARTS; i++) {
      const dir = join(work, `agent-${i}`);
      mkdirSync(join(dir, 'var/run/secrets/tokens'), { recursive: true });
      mkdirSync(join(dir, 'var/run/secrets/mesh'), { recursive: true });
      writeFileSync(join(dir, 'var/run/secrets/tokens/mesh-token'), token);
      writeFileSync(join(dir, 'var/run/secrets/mesh/root-cert.pem'), root);
      const socket = join(dir, 'var/run/secrets/workload-spiffe-uds/socket');
      const started = performance.now();
      const agent = spawn(process.execPath, [join(ROOT, 'bin/pilot-agent.js'), 'proxy', 'sidecar'], {
        cwd: dir,
        env: {
          PATH: processEnvironment()['PATH'] ?? '',
          INSTANCE_IP: `127.0.77.${(i % 250) + 1}`,
          POD_NAMESPACE: 'foo',
          SERVICE_ACCOUNT: 'sleep',
          ECC_SIGNATURE_ALGORITHM: 'ECDSA',
          // No drain on SIGTERM: the benchmark times starts, and 50 drains of 5 s would take minutes.
          PROXY_CONFIG: JSON.stringify({ discoveryAddress: '127.0.0.1:15712', terminationDrainDuration: '1ms', proxyMetadata: { POD_NAME: `sleep-${i}` } }),
        },
        stdio: 'ignore',
      });
      await until(() => (existsSync(socket) ? true : undefined), 10_000);
      await firstSecret(socket);
      times.push(performance.now() - started);
      if (i === STARTS - 1) {
        // 3 s after start V8 still holds the young generation start-up grew; its memory reducer
        // gives it back once the process has been quiet for a while (about 20 s): steady is after that.
        await new Promise((done) => setTimeout(done, 3000));
        earlyRssKb = rssKbOf(agent.pid ?? 0);
        await new Promise((done) => setTimeout(done, STEADY_AFTER_MS - 3000));
        rssKb = rssKbOf(agent.pid ?? 0);
        const children = readFileSync(`/proc/${agent.pid}/task/${agent.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter((pid) => pid !== '');
        dataPlaneRssKb = children.reduce((sum, pid) => sum + rssKbOf(pid), 0);
      }
      agent.kill('SIGTERM');
      await new Promise((done) => agent.once('exit', done));
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(`agent benchmark: ${STARTS} starts against an idle daemon, ECDSA P-256 keys, Node ${process.version}`);
    const p99 = percentile(times, 99);
    console.log(`  start → first workload certificate over SDS: p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms`);
    console.log(`  bare \`node -e 0\`, spawn to exit, same run: p50 ${bare.p50.toFixed(0)} ms, p99 ${bare.p99.toFixed(0)} ms`);
    console.log(`  agent p99 ÷ bare node p50: ${(p99 / bare.p50).toFixed(1)} (goal ≤ 6)`);
    console.log(
      `  steady RSS of one agent (${STEADY_AFTER_MS / 1000} s after start): ${(rssKb / 1024).toFixed(1)} MB (goal ≤ 60 MB; 3 s after start ${(earlyRssKb / 1024).toFixed(1)} MB); an idle bare Node, same run: ${(bare.idleRssKb / 1024).toFixed(1)} MB; the reference agent about 50 MB without Envoy`,
    );
    console.log(`  steady RSS of its embedded data plane process (in place of Envoy): ${(dataPlaneRssKb / 1024).toFixed(1)} MB`);
  } finally {
    daemon.kill('SIGTERM');
    await issuer.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
