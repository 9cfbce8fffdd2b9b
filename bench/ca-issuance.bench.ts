/**
 * CA issuance benchmark: prints figures and ratios, never passes or fails.
 *
 *   - in-process end-to-end issuance (token verified with a cached key set, CSR verified,
 *     certificate built and signed, chain returned): certificates per second per core and p99
 *     over a 1000-CSR burst, for an ECDSA P-256 CA and an RSA-2048 CA; once with one token
 *     (verified once, then from the CA's verdict cache: an agent renewing), once with a new
 *     token per call (a fleet of agents starting: one token verification each);
 *   - the same over TLS gRPC on loopback, the client in a child process (so the CPU counted is
 *     the server's alone), one call at a time and 8 in flight; then again with the signing
 *     threads the daemon starts when CSRs come in numbers (`signing-pool.ts`);
 *   - the crypto floor, timed with node:crypto in the same run (`crypto-floor.ts`): one sign
 *     with the CA's key plus the verification every CSR needs (its requester's key imported,
 *     its self-signature checked); the token is verified once and then cached, so its
 *     verification is printed beside the floor but not counted in it. Ratios of each path to
 *     the floor, with their goals;
 *   - the signing step alone beside `openssl speed -seconds 3 ecdsap256 rsa2048`, both per CPU
 *     second (the machine is shared: wall-clock rates would count other jobs' time), node's
 *     timed on its own thread right before and after openssl's, so that both see the machine
 *     in the same state.
 *
 * Workload keys and CSRs are made before the timed part. The gRPC client keeps one channel
 * (one TLS connection, as an agent does), opened during the warm-up, so no handshake falls in
 * the measured bursts.
 */
import { execFile, spawn } from 'node:child_process';
import { KeyObject, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Metadata, credentials } from '@grpc/grpc-js';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import {
  buildCsr,
  loadKeyCertBundle,
  newCaServer,
  newCertificateAuthority,
  newCertificateService,
  newJwtAuthenticator,
  newMeshCertificateClient,
  newSelfSignedMaterial,
  newSigningPool,
  type CaKeyType,
} from '../ca/index.js';
import { daemonServingFromSettings } from '../ca/ca-settings.js';
import { loadSettings, newMetrics, newNopLogger, newRealClock } from '../runtime/index.js';
import { measureCryptoFloor, nodeSignRate, type CryptoFloor, type CryptoFloorOptions } from './crypto-floor.js';

const BURST = 1000;
/** Calls before the measured burst: V8 needs a few thousand to optimise the hot path. */
const WARMUP = 3000;
const GRPC_IN_FLIGHT = 8;
const SIGN_SECONDS = 3;
/** The TBS certificate's size with each CA key (an ECDSA P-256 leaf signed by a P-256 or an RSA-2048 CA). */
const SIGN_TBS_BYTES = { ecdsap256: 450, rsa2048: 700 } as const;
const HOUR = 3_600_000;
const CALL_DEADLINE_MS = 30_000;

interface Figures {
  perCore: number;
  wallRate: number;
  p50: number;
  p99: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Runs `n` requests with at most `inFlight` outstanding; latency per request, CPU of the whole process. */
async function burst(n: number, inFlight: number, one: (i: number) => Promise<unknown>): Promise<Figures> {
  const latencies: number[] = new Array(n);
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const t0 = performance.now();
      await one(i);
      latencies[i] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const sorted = [...latencies].sort((a, b) => a - b);
  return { perCore: n / cpuSeconds, wallRate: (n * 1000) / wallMs, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function opensslSignRates(): Promise<{ ecdsap256: number; rsa2048: number; raw: string }> {
  // Without -elapsed, openssl speed divides by its own CPU time.
  const { stdout } = await promisify(execFile)('openssl', ['speed', '-seconds', String(SIGN_SECONDS), 'ecdsap256', 'rsa2048'], { timeout: 120_000 });
  const rsa = /^rsa\s+2048 bits\s+\S+s\s+\S+s\s+([\d.]+)\s+([\d.]+)/m.exec(stdout);
  const ec = /256 bits ecdsa \(nistp256\)\s+\S+s\s+\S+s\s+([\d.]+)\s+([\d.]+)/m.exec(stdout);
  return { rsa2048: Number(rsa?.[1] ?? NaN), ecdsap256: Number(ec?.[1] ?? NaN), raw: stdout };
}

interface Issuer {
  close(): Promise<void>;
  cold: Figures;
  inProcess: Figures;
  /** Every call with a token not seen before: one token verification each. */
  inProcessNewTokens: Figures;
  grpcSequential: Figures;
  grpc: Figures;
  /** The same two phases with the signing threads. */
  grpcPooledSequential: Figures;
  grpcPooled: Figures;
  poolThreads: number;
  floor: CryptoFloor;
}

/** Tokens of distinct service accounts, each new to the CA. */
type TokenMaker = (count: number) => Promise<string[]>;

async function benchCa(
  keyType: CaKeyType,
  token: string,
  tokenParts: CryptoFloorOptions['token'],
  newTokens: TokenMaker,
  jwksUrl: string,
  issuer: string,
  csrs: readonly string[],
): Promise<Issuer> {
  const clock = newRealClock();
  const metrics = newMetrics('pilot-discovery');
  const settings = loadSettings('pilot-discovery', {});
  const material = await newSelfSignedMaterial({ keyType, rsaKeySize: 2048, trustDomain: 'cluster.local', ttlMs: 87600 * HOUR, nowMs: clock.now() });
  const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 2160 * HOUR, metrics });
  const authenticators = [newJwtAuthenticator({ rule: { issuer, audiences: ['mesh-ca'], jwksUri: jwksUrl }, trustDomain: 'cluster.local', clock })];
  const service = newCertificateService({ ca, authenticators, metrics, log: newNopLogger('serverca') });
  const context = { bearerToken: token };
  const request = (i: number) => service.createCertificate({ csr: csrs[i % csrs.length]!, validityDurationSeconds: 0 }, context);

  const sample = await request(0);
  const cold = await burst(BURST, 1, request);
  await burst(WARMUP, 1, request);
  const inProcess = await burst(BURST, 1, request);
  const withTokens = (tokens: readonly string[]) => (i: number) =>
    service.createCertificate({ csr: csrs[i % csrs.length]!, validityDurationSeconds: 0 }, { bearerToken: tokens[i]! });
  await burst(BURST, 1, withTokens(await newTokens(BURST)));
  const inProcessNewTokens = await burst(BURST, 1, withTokens(await newTokens(BURST)));

  const server = newCaServer({
    serving: daemonServingFromSettings(settings),
    ca,
    authenticators,
    metrics,
    log: newNopLogger('serverca'),
    host: '127.0.0.1',
    port: 0,
    clock,
  });
  const abort = new AbortController();
  const running = server.start(abort.signal);
  await server.waitForReady?.(abort.signal);
  const [grpcSequential, grpc] = await grpcBurstsFromChild(`localhost:${server.port()}`, ca.rootBundlePem(), token);
  abort.abort();
  await running;

  // The same with the signing threads the daemon starts when CSRs come in numbers.
  const pool = newSigningPool({ ca, threads: availableParallelism(), clock });
  const pooledServer = newCaServer({
    serving: daemonServingFromSettings(settings),
    ca,
    signer: pool,
    authenticators,
    metrics,
    log: newNopLogger('serverca'),
    host: '127.0.0.1',
    port: 0,
    clock,
  });
  const pooledAbort = new AbortController();
  const pooledRunning = pooledServer.start(pooledAbort.signal);
  await pooledServer.waitForReady?.(pooledAbort.signal);
  const [grpcPooledSequential, grpcPooled] = await grpcBurstsFromChild(`localhost:${pooledServer.port()}`, ca.rootBundlePem(), token);
  const poolThreads = pool.threads();

  // The floor: node:crypto over a TBS of the size the CA produces and CSRs like the workload's.
  const certDer = Buffer.from(sample[0]!.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const floor = measureCryptoFloor({ caKey: ca.bundle().signer.key, tbsLength: certDer.length - (keyType === 'rsa' ? 270 : 90), token: tokenParts });
  return {
    cold,
    inProcess,
    inProcessNewTokens,
    grpcSequential: grpcSequential!,
    grpc: grpc!,
    grpcPooledSequential: grpcPooledSequential!,
    grpcPooled: grpcPooled!,
    poolThreads,
    floor,
    close: async () => {
      pooledAbort.abort();
      await pooledRunning;
      await pool.close();
    },
  };
}

/** In-flight limits of the gRPC bursts: one at a time (latency), then a loaded server. */
const GRPC_PHASES = [1, GRPC_IN_FLIGHT] as const;

/**
 * Runs the gRPC bursts from a child process (this file, `grpc-client` mode) and counts this
 * process's CPU between the child's `start` and `end` lines: the server's cost alone.
 */
async function grpcBurstsFromChild(target: string, rootsPem: string, token: string): Promise<Figures[]> {
  const dir = await mkdtemp(join(tmpdir(), 'ca-bench-'));
  try {
    const rootsFile = join(dir, 'roots.pem');
    await writeFile(rootsFile, rootsPem);
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'grpc-client', target, rootsFile, token], { stdio: ['ignore', 'pipe', 'inherit'] });
    let cpuStart = process.cpuUsage();
    const results: Figures[] = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line === 'start') cpuStart = process.cpuUsage();
        else if (line.startsWith('end ')) {
          const cpu = process.cpuUsage(cpuStart);
          const client = JSON.parse(line.slice(4)) as Omit<Figures, 'perCore'>;
          results.push({ ...client, perCore: BURST / ((cpu.user + cpu.system) / 1e6) });
        }
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0 || results.length !== GRPC_PHASES.length) throw new Error(`the gRPC client process failed (exit ${code})`);
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function grpcClientMain(target: string, rootsFile: string, token: string): Promise<void> {
  const csrs = Array.from({ length: BURST }, () => buildCsr({ key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }));
  const client = newMeshCertificateClient(target, credentials.createSsl(await readFile(rootsFile)));
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  // A deadline turns a stuck call into a failed run instead of a benchmark that never ends.
  const call = (i: number) =>
    client.createCertificate({ csr: csrs[i % csrs.length]!, validity_duration: 0 }, metadata, { deadline: new Date(Date.now() + CALL_DEADLINE_MS) });
  await burst(WARMUP, GRPC_IN_FLIGHT, call);
  for (const inFlight of GRPC_PHASES) {
    process.stdout.write('start\n');
    const figures = await burst(BURST, inFlight, call);
    process.stdout.write(`end ${JSON.stringify({ wallRate: figures.wallRate, p50: figures.p50, p99: figures.p99 })}\n`);
  }
  client.close();
}

async function main(): Promise<void> {
  const keys = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  let jwksFetches = 0;
  const jwks = createServer((_req, res) => {
    jwksFetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
  const signToken = (account: string): Promise<string> =>
    new SignJWT({ 'kubernetes.io': { namespace: 'bench', serviceaccount: { name: account } } })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
      .setIssuer(base)
      .setAudience('mesh-ca')
      .setSubject(`system:serviceaccount:bench:${account}`)
      .setExpirationTime('1h')
      .sign(keys.privateKey);
  const token = await signToken('load');
  let accounts = 0;
  const newTokens: TokenMaker = (count) => Promise.all(Array.from({ length: count }, () => signToken(`load-${accounts++}`)));
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const tokenParts = { signingInput: Buffer.from(`${header}.${payload}`), signature: Buffer.from(signature, 'base64url'), key: KeyObject.from(keys.publicKey) };

  process.stdout.write(`node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}\n`);
  process.stdout.write(`preparing ${BURST} workload keys and CSRs (ECDSA P-256)...\n`);
  const csrs = Array.from({ length: BURST }, () => buildCsr({ key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }));

  process.stdout.write(`openssl speed -seconds ${SIGN_SECONDS} ecdsap256 rsa2048, and node:crypto's sign just before and after ...\n`);
  // The binding against OpenSSL on the machine in one state: node's rate is timed right before
  // and right after openssl speed (the better of the two), not between the CA's phases.
  const signKeys = {
    ecdsap256: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    rsa2048: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  };
  const nodeRates = (): { ecdsap256: number; rsa2048: number } => ({
    ecdsap256: nodeSignRate(signKeys.ecdsap256, SIGN_TBS_BYTES.ecdsap256),
    rsa2048: nodeSignRate(signKeys.rsa2048, SIGN_TBS_BYTES.rsa2048),
  });
  const nodeBefore = nodeRates();
  const openssl = await opensslSignRates();
  const nodeAfter = nodeRates();
  const nodeSign = { ecdsap256: Math.max(nodeBefore.ecdsap256, nodeAfter.ecdsap256), rsa2048: Math.max(nodeBefore.rsa2048, nodeAfter.rsa2048) };

  const results: Array<[string, Issuer, number, number]> = [];
  for (const [label, keyType, opensslRate, nodeRate] of [
    ['ECDSA P-256 CA', 'ecdsa-p256', openssl.ecdsap256, nodeSign.ecdsap256],
    ['RSA-2048 CA', 'rsa', openssl.rsa2048, nodeSign.rsa2048],
  ] as const) {
    process.stdout.write(`benchmarking the ${label}...\n`);
    results.push([label, await benchCa(keyType, token, tokenParts, newTokens, `${base}/keys`, base, csrs), opensslRate, nodeRate]);
  }

  const f = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const lines = [
    '',
    `CA issuance, ${BURST}-CSR bursts (auth: OIDC JWT, one token, verified once then cached; key set fetched ${jwksFetches} time(s)); load average ${load}`,
    '',
    '| CA | path | certs/s/core | certs/s (wall) | p50 ms | p99 ms | ÷ floor |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [label, r] of results) {
    const ratio = (x: Figures): string => f(x.perCore / r.floor.perCore, 2);
    lines.push(
      `| ${label} | in-process, sequential, first burst (cold JIT) | ${f(r.cold.perCore)} | ${f(r.cold.wallRate)} | ${f(r.cold.p50, 2)} | ${f(r.cold.p99, 2)} | ${ratio(r.cold)} |`,
    );
    lines.push(
      `| ${label} | in-process, sequential, after ${f(WARMUP)} warm-up calls | ${f(r.inProcess.perCore)} | ${f(r.inProcess.wallRate)} | ${f(r.inProcess.p50, 2)} | ${f(r.inProcess.p99, 2)} | ${ratio(r.inProcess)} |`,
    );
    const n = r.inProcessNewTokens;
    lines.push(
      `| ${label} | in-process, a new token per call (÷ floor + token verify) | ${f(n.perCore)} | ${f(n.wallRate)} | ${f(n.p50, 2)} | ${f(n.p99, 2)} | ${f(n.perCore / r.floor.withTokenPerCore, 2)} |`,
    );
    lines.push(
      `| ${label} | gRPC over TLS, 1 in flight (server CPU) | ${f(r.grpcSequential.perCore)} | ${f(r.grpcSequential.wallRate)} | ${f(r.grpcSequential.p50, 2)} | ${f(r.grpcSequential.p99, 2)} | ${ratio(r.grpcSequential)} |`,
    );
    lines.push(
      `| ${label} | gRPC over TLS, ${GRPC_IN_FLIGHT} in flight (server CPU) | ${f(r.grpc.perCore)} | ${f(r.grpc.wallRate)} | ${f(r.grpc.p50, 2)} | ${f(r.grpc.p99, 2)} | ${ratio(r.grpc)} |`,
    );
    const pooled = `${r.poolThreads} signing thread${r.poolThreads === 1 ? '' : 's'}`;
    lines.push(
      `| ${label} | gRPC over TLS, 1 in flight, ${pooled} (server CPU) | ${f(r.grpcPooledSequential.perCore)} | ${f(r.grpcPooledSequential.wallRate)} | ${f(r.grpcPooledSequential.p50, 2)} | ${f(r.grpcPooledSequential.p99, 2)} | ${ratio(r.grpcPooledSequential)} |`,
    );
    lines.push(
      `| ${label} | gRPC over TLS, ${GRPC_IN_FLIGHT} in flight, ${pooled} (server CPU) | ${f(r.grpcPooled.perCore)} | ${f(r.grpcPooled.wallRate)} | ${f(r.grpcPooled.p50, 2)} | ${f(r.grpcPooled.p99, 2)} | ${ratio(r.grpcPooled)} |`,
    );
  }
  lines.push(
    '',
    'The crypto floor (node:crypto, µs of CPU): CA sign + CSR key import + CSR verify = floor; the token verify is not counted (cached per token)',
    '',
    '| CA | sign | CSR key import | CSR verify | floor certs/s/core | with parsed keys (no import) | token verify (once per token) |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const [label, r] of results) {
    const fl = r.floor;
    lines.push(
      `| ${label} | ${f(fl.signUs, 1)} | ${f(fl.csrKeyImportUs, 1)} | ${f(fl.csrVerifyUs, 1)} | ${f(fl.perCore)} | ${f(fl.parsedKeysPerCore)} | ${f(fl.tokenVerifyUs, 1)} |`,
    );
  }
  lines.push(
    '',
    '| CA key | node:crypto sign/s per CPU-s (SHA-256 over a TBS, timed beside openssl) | openssl speed sign/s per CPU-s (a digest) | ratio (goal >= 0.75 for P-256) | node:crypto sign/s in the floor (after the CA phases) |',
    '|---|---:|---:|---:|---:|',
  );
  for (const [label, r, opensslRate, nodeRate] of results) {
    lines.push(`| ${label} | ${f(nodeRate)} | ${f(opensslRate)} | ${f(nodeRate / opensslRate, 2)} | ${f(1e6 / r.floor.signUs)} |`);
  }
  const ec = results[0]![1];
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const inRatio = ec.inProcess.perCore / ec.floor.perCore;
  const grpcRatio = ec.grpc.perCore / ec.floor.perCore;
  const signRatio = nodeSign.ecdsap256 / openssl.ecdsap256;
  lines.push(
    '',
    `Goals (ECDSA P-256 CA; floor ${f(ec.floor.perCore)} certs/s/core, ${f(ec.floor.parsedKeysPerCore)} with parsed keys):`,
    `  in-process ÷ floor ${f(inRatio, 2)} (goal >= 0.60: ${verdict(inRatio >= 0.6)}; ÷ the parsed-keys floor ${f(ec.inProcess.perCore / ec.floor.parsedKeysPerCore, 2)})`,
    `  gRPC ${GRPC_IN_FLIGHT} in flight ÷ floor ${f(grpcRatio, 2)} (goal >= 0.45: ${verdict(grpcRatio >= 0.45)}; ÷ the parsed-keys floor ${f(ec.grpc.perCore / ec.floor.parsedKeysPerCore, 2)})`,
    `  gRPC p99 with ${GRPC_IN_FLIGHT} in flight ${f(ec.grpc.p99, 2)} ms vs 4 × one-at-a-time p50 ${f(4 * ec.grpcSequential.p50, 2)} ms (${f(ec.grpc.p99 / ec.grpcSequential.p50, 1)}× p50; goal <= 4×: ${verdict(ec.grpc.p99 <= 4 * ec.grpcSequential.p50)})`,
    `  node:crypto sign ÷ openssl speed ${f(signRatio, 2)} (goal >= 0.75: ${verdict(signRatio >= 0.75)})`,
    '',
    `Signing threads (${ec.poolThreads} beside the gRPC thread), speed-up of the ${GRPC_IN_FLIGHT}-in-flight wall rate over one thread:`,
    ...results.map(
      ([label, r]) =>
        `  ${label}: ${f(r.grpcPooled.wallRate / r.grpc.wallRate, 2)}× (p50 ${f(r.grpc.p50, 2)} → ${f(r.grpcPooled.p50, 2)} ms, p99 ${f(r.grpc.p99, 2)} → ${f(r.grpcPooled.p99, 2)} ms)`,
    ),
    '',
  );
  process.stdout.write(lines.join('\n'));

  for (const [, r] of results) await r.close();
  await new Promise((resolve) => jwks.close(resolve));
}

const [mode, ...args] = process.argv.slice(2);
(mode === 'grpc-client' ? grpcClientMain(args[0]!, args[1]!, args[2]!) : main()).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`);
  process.exitCode = 1;
});
