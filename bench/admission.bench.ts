/**
 * Admission benchmark: the real admission server (`newAdmissionServer` with the injection route
 * over the built-in injector config) answering `/inject` for a typical pod (two app containers
 * with ports, readiness and liveness HTTP probes, labels app/version, namespace `foo`), beside a
 * bare `node:https` server with the same certificate that reads the whole body and answers the
 * very bytes the admission server answered. Both are loaded the same way in the same run: 50
 * requests in flight over 50 keep-alive connections, a warm-up, then measured rounds that
 * alternate bare/admission to spread drift. Prints requests per second, p50 and p99 of each and
 * the ratio admission/bare. Never passes or fails.
 *
 * Three modes, each beside the bare server:
 *  - identical pods: every request carries the same pod, as when a ReplicaSet scales up (one
 *    template, no name yet); after the first, the webhook's patch cache answers.
 *  - distinct pods: every request's pod has a label value of its own, so nothing is served from
 *    the patch cache; the label is one the templates never read, so their renders are remembered
 *    (render-memo.ts): the cost of injecting pods of one workload that differ in name and labels.
 *  - distinct workloads: every request's pod has an `app` label of its own, which the sidecar
 *    template reads for the canonical name: every render is a fresh one, the raw cost of injection
 *    (the rendered text differs from the last in a line: rendered-yaml-reader.ts edits it).
 *
 *   npm run bench:admission [-- seconds-per-server]
 *
 * The servers and the load generator share this one Node process (one core for the event loop):
 * the admission rate is the rate per daemon core with the client's cost included, the same client
 * cost the bare server pays, so the ratio is fair while both absolute rates are lower bounds.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_MESH_CONFIG } from '../crds/index.js';
import { newMetrics, newNopLogger } from '../runtime/index.js';
import { newAdmissionServer, type AdmissionRoute, type ServingIdentity, type ServingKeyCertificate } from '../webhook/index.js';
import { BUILTIN_INJECTOR_CONFIG } from '../webhook/inject/index.js';
import { newInjectionWebhook } from '../webhook/injection-webhook.js';
import type { WebhookSettings } from '../webhook/webhook-settings.js';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';

const IN_FLIGHT = 50;
const WARMUP_SECONDS = 2;
/** Measured seconds per server, split into ROUNDS alternating rounds. */
const SECONDS = Number(process.argv[2] ?? 8);
const ROUNDS = 4;

const SETTINGS: WebhookSettings = {
  injectEnabled: true,
  injectionWebhookConfigName: 'mesh-sidecar-injector',
  legacyFsGroup: true,
  rewriteProbeLegacyLocalhost: false,
  revision: '',
};

/** A typical pod of a Deployment: two app containers with ports and HTTP readiness and liveness probes. */
function typicalPod(uniqueLabel: string | undefined, uniqueApp?: string): Record<string, unknown> {
  const container = (name: string, image: string, port: number): Record<string, unknown> => ({
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [{ name: 'LOG_LEVEL', value: 'info' }],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port }, initialDelaySeconds: 2, periodSeconds: 5 },
    livenessProbe: { httpGet: { path: '/healthz', port }, initialDelaySeconds: 10, periodSeconds: 10 },
    volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'productpage-v1-6b746f74dc-',
      namespace: 'foo',
      labels: {
        app: uniqueApp ?? 'productpage',
        version: 'v1',
        'pod-template-hash': '6b746f74dc',
        ...(uniqueLabel === undefined ? {} : { 'bench-id': uniqueLabel }),
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'productpage-v1-6b746f74dc',
          uid: '0b9b2b1e-4bd4-4a5c-9a55-8d2f2c6c1f10',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serviceAccountName: 'bookinfo-productpage',
      containers: [container('productpage', 'docker.io/example/productpage:1.20.2', 9080), container('cache', 'docker.io/example/cache:2.4.1', 6380)],
      volumes: [{ name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
    },
  };
}

function admissionReview(uniqueLabel?: string, uniqueApp?: string): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '5f1c2a8e-3b7d-4f60-9e1a-2c4d6b8a0f13',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      requestKind: { group: '', version: 'v1', kind: 'Pod' },
      requestResource: { group: '', version: 'v1', resource: 'pods' },
      name: '',
      namespace: 'foo',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:authenticated'] },
      object: typicalPod(uniqueLabel, uniqueApp),
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  });
}

interface Target {
  readonly name: string;
  readonly port: number;
  readonly agent: Agent;
}

interface Reply {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

function post(target: Target, ca: string, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: '/inject',
        method: 'POST',
        agent: target.agent,
        ca,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Round {
  readonly count: number;
  readonly seconds: number;
  readonly cpuMicros: number;
  readonly latencies: number[];
}

/** What one mode sends: the next request body (the same one for identical pods, a new pod each time for distinct ones). */
interface Mode {
  readonly title: string;
  readonly nextBody: () => Buffer;
}

/** Closed loop, IN_FLIGHT workers for `seconds`; every answer must be 200 with the expected length. */
async function round(target: Target, ca: string, mode: Mode, expectedLength: number, seconds: number): Promise<Round> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const end = started + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const body = mode.nextBody();
      const t0 = performance.now();
      const reply = await post(target, ca, body);
      latencies.push(performance.now() - t0);
      if (reply.status !== 200 || reply.body.length !== expectedLength) {
        throw new Error(
          `${target.name}: status ${reply.status}, ${reply.body.length} bytes (expected 200, ${expectedLength} bytes): ${reply.body.toString('utf8').slice(0, 300)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { count: latencies.length, seconds: elapsed, cpuMicros: cpu.user + cpu.system, latencies };
}

interface Figures {
  readonly count: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly cpuPerRequestUs: number;
  readonly roundRates: readonly number[];
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

function figuresOf(rounds: readonly Round[]): Figures {
  const count = rounds.reduce((sum, r) => sum + r.count, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const cpu = rounds.reduce((sum, r) => sum + r.cpuMicros, 0);
  const sorted = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    count,
    rps: count / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: percentile(sorted, 100),
    cpuPerRequestUs: cpu / count,
    roundRates: rounds.map((r) => r.count / r.seconds),
  };
}

interface Servers {
  readonly admission: Target;
  readonly baseline: Target;
  readonly ca: string;
  /** What the bare server answers; set to the admission server's answer of each mode. */
  readonly bareAnswer: { body: Buffer };
}

/** One mode beside the bare server: a checked sample, a warm-up, alternating rounds; prints the table and returns the summary line. */
async function measure(mode: Mode, servers: Servers): Promise<string> {
  const { admission, baseline, ca } = servers;
  // One real answer, checked: an injected pod (allowed, with a JSON patch).
  const body = mode.nextBody();
  const sample = await post(admission, ca, body);
  if (sample.status !== 200) throw new Error(`the admission server answered ${sample.status}: ${sample.body.toString('utf8')}`);
  const review = JSON.parse(sample.body.toString('utf8')) as { response?: { allowed?: boolean; patchType?: string; patch?: string } };
  if (review.response?.allowed !== true || review.response.patchType !== 'JSONPatch' || !review.response.patch) {
    throw new Error(`the pod was not injected: ${sample.body.toString('utf8').slice(0, 500)}`);
  }
  const patchOps = (JSON.parse(Buffer.from(review.response.patch, 'base64').toString('utf8')) as unknown[]).length;
  const answer = sample.body;
  servers.bareAnswer.body = answer;
  const bareSample = await post(baseline, ca, body);
  if (bareSample.status !== 200 || !bareSample.body.equals(answer) || bareSample.contentType !== sample.contentType)
    throw new Error('the bare server does not answer the same bytes');

  process.stdout.write(
    `\n== ${mode.title}\n` +
      `request: AdmissionReview v1 CREATE pods, ${body.length} bytes (two app containers with ports, readiness and liveness HTTP probes); ` +
      `answer: ${answer.length} bytes, allowed, JSON patch of ${patchOps} operations\n`,
  );
  for (const target of [baseline, admission]) await round(target, ca, mode, answer.length, WARMUP_SECONDS);
  const rounds: Record<'bare' | 'admission', Round[]> = { bare: [], admission: [] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which goes first so neither always follows the other's garbage.
    const order = i % 2 === 0 ? (['bare', 'admission'] as const) : (['admission', 'bare'] as const);
    for (const which of order) rounds[which].push(await round(which === 'bare' ? baseline : admission, ca, mode, answer.length, SECONDS / ROUNDS));
  }
  const b = figuresOf(rounds.bare);
  const a = figuresOf(rounds.admission);

  const row = (name: string, x: Figures): string =>
    `| ${name} | ${f(x.count)} | ${f(x.rps)} | ${x.roundRates.map((r) => f(r)).join(' / ')} | ${f(x.p50, 2)} | ${f(x.p99, 2)} | ${f(x.max, 2)} | ${f(x.cpuPerRequestUs)} |`;
  const ratio = a.rps / b.rps;
  const verdict = `admission/bare rate ratio ${f(ratio, 3)} (goal ≥ 0.5: ${ratio >= 0.5 ? 'met' : 'not met'}); admission p99 ${f(a.p99, 1)} ms (goal ≤ 20 ms: ${a.p99 <= 20 ? 'met' : 'not met'})`;
  const lines = [
    '',
    `| server | requests | requests/s | per round | p50 ms | p99 ms | max ms | process CPU µs/request |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('bare HTTPS (same bytes)', b),
    row('admission /inject', a),
    '',
    `Both servers and the load generator run in this one Node process (one event-loop core), so the admission rate is its rate per daemon core: ${f(a.rps)} admission requests/s/core,`,
    `client cost included (the same client, same connections and in-flight count for both servers; the server alone would do more).`,
    `Admission's own cost: about ${f(a.cpuPerRequestUs - b.cpuPerRequestUs)} µs of CPU per request beyond TLS, HTTP and the client (process CPU per request, admission minus bare).`,
    '',
    verdict,
    '',
  ];
  process.stdout.write(lines.join('\n'));
  return `${mode.title.split(' (')[0] ?? mode.title}: ${verdict}`;
}

function f(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main(): Promise<void> {
  process.stdout.write(`admission benchmark: node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}\n`);
  const dir = await mkdtemp(join(tmpdir(), 'admission-bench-'));
  const abort = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const agents: Agent[] = [];
  let bare: ReturnType<typeof createServer> | undefined;
  try {
    // A CA and a P-256 serving certificate for 127.0.0.1 (the client verifies it, as the API server would).
    const caFiles = await certificateAuthority(dir, 'admission-bench-root');
    const leaf = await signedCertificate(dir, 'meshd', 'DNS:meshd.mesh-system.svc,IP:127.0.0.1', caFiles);
    const ca = await readFile(caFiles.certFile, 'utf8');
    const current: ServingKeyCertificate = { certChainPem: await readFile(leaf.certFile, 'utf8'), keyPem: await readFile(leaf.keyFile, 'utf8') };
    const identity: ServingIdentity = {
      watch(listener) {
        listener(current);
        return () => undefined;
      },
    };

    // The admission server as the daemon builds it: /inject over the built-in injector config.
    const injection = newInjectionWebhook({
      settings: SETTINGS,
      meshConfig: () => DEFAULT_MESH_CONFIG,
      metrics: newMetrics('pilot-discovery'),
      log: newNopLogger(),
    });
    if (!injection.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' })) throw new Error('the built-in injector config was refused');
    const routes = new Map<string, AdmissionRoute>([
      ['/inject', injection.route],
      ['/inject/', injection.route],
    ]);
    const server = newAdmissionServer({ address: { host: '127.0.0.1', port: 0 }, identity: () => Promise.resolve(identity), routes, log: newNopLogger() });
    running = server.start(abort.signal);
    await server.waitForReady(abort.signal);

    const newAgent = (): Agent => {
      const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
      agents.push(agent);
      return agent;
    };
    const admission: Target = { name: 'admission server', port: server.boundAddress().port, agent: newAgent() };

    // The bare server: same certificate, reads the whole body, answers the bytes the admission server answered in the mode at hand.
    const bareAnswer = { body: Buffer.alloc(0) };
    const bareServer = createServer({ cert: current.certChainPem, key: current.keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (Buffer.concat(chunks).length === 0) {
          res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('no body found\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(bareAnswer.body);
      });
    });
    bare = bareServer;
    await new Promise<void>((resolve) => bareServer.listen(0, '127.0.0.1', resolve));
    const baseline: Target = { name: 'bare HTTPS server', port: (bareServer.address() as AddressInfo).port, agent: newAgent() };

    process.stdout.write(
      `load: ${IN_FLIGHT} requests in flight over ${IN_FLIGHT} keep-alive TLS connections per server; warm-up ${WARMUP_SECONDS} s each, then ${SECONDS} s each in ${ROUNDS} alternating rounds, per mode\n`,
    );
    const identicalBody = Buffer.from(admissionReview());
    let podNumber = 0;
    const modes: Mode[] = [
      { title: 'identical pods (a ReplicaSet scale-up: after the first request the patch cache answers)', nextBody: () => identicalBody },
      // Fixed-width ids keep every body, and so every patch, the same length.
      {
        title:
          "distinct pods (a label value of its own per request, one the templates do not read: never in the patch cache; the templates' renders are remembered)",
        nextBody: () => Buffer.from(admissionReview(String(podNumber++).padStart(9, '0'))),
      },
      {
        title:
          'distinct workloads (an app label of its own per request, which the sidecar template reads for the canonical name: every template renders afresh, the raw injection cost)',
        nextBody: () => Buffer.from(admissionReview(undefined, `app-${String(podNumber++).padStart(9, '0')}`)),
      },
    ];
    const summary: string[] = [];
    for (const mode of modes) summary.push(await measure(mode, { admission, baseline, ca, bareAnswer }));
    process.stdout.write(['', 'summary:', ...summary, ''].join('\n'));
  } finally {
    for (const agent of agents) agent.destroy();
    if (bare) {
      const closing = bare;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    }
    abort.abort();
    await running;
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`);
  process.exitCode = 1;
});
