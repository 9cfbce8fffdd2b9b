import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { curl } from '../testing/curl.js';
import { runBin } from '../testing/run-bin.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// `meshctl x metrics` against a real Prometheus (Debian's package, installed by
// scripts/prepare-test-env.sh) scraping every proxy's 15090 of the local mesh in Kubernetes mode,
// registered in the API server double as the metrics add-on (a pod labelled app=prometheus in
// mesh-system whose port 9090 the double forwards to the local process).
const PROMETHEUS = spawnSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).stdout.trim();
const describeReal = PROMETHEUS !== '' ? describe : describe.skip;
if (PROMETHEUS === '')
  console.warn("skipped: meshctl x metrics against a real Prometheus (no prometheus binary; scripts/prepare-test-env.sh installs Debian's as root)");

/** Pod addresses of their own (127.37.x.y), so this mesh never meets another test's. */
const ADDRESS_BLOCK = 37;
const SELECTOR = 'destination_workload="httpbin-foo",destination_workload_namespace="foo",reporter="destination"';

let mesh: LocalMesh | undefined;
let prometheus: ChildProcess | undefined;
let workDir: string;
let prometheusPort: number;

/** One instant query's first value (0 for an empty result). */
async function query(promql: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${prometheusPort}/api/v1/query?${new URLSearchParams({ query: promql })}`);
  const body = (await response.json()) as { data?: { result?: { value?: [number, string] }[] } };
  return Number(body.data?.result?.[0]?.value?.[1] ?? 0);
}

/** From sleep-foo's sidecar to httpbin.foo: `/headers` 200, `/status/503` 503, anything else 404. */
async function send(counts: Readonly<Record<'/headers' | '/status/503' | '/missing', number>>): Promise<void> {
  for (const [path, times] of Object.entries(counts)) {
    for (let i = 0; i < times; i++) {
      const result = await curl(['-x', mesh?.proxyOf('foo') ?? '', `http://httpbin.foo:8000${path}`]);
      expect(result.code).toBe(path === '/headers' ? '200' : path === '/missing' ? '404' : '503');
    }
  }
}

function stopProcess(child: ChildProcess | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

describeReal('meshctl x metrics against a real Prometheus scraping the local mesh', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'metrics-e2e-'));
    prometheusPort = await freePort();
    const extraPods = (namespace: string, pod: string, port: number): { host: string; port: number } | undefined =>
      namespace === 'mesh-system' && pod === 'prometheus' && port === 9090 ? { host: '127.0.0.1', port: prometheusPort } : undefined;
    // sleep-foo and httpbin-foo, the pair the test measures: the other pods would be scraped, never called.
    mesh = await startLocalMesh({
      workDir,
      orchestrator: 'kubernetes',
      addressBlock: ADDRESS_BLOCK,
      extraPods,
      sampleFiles: ['namespaces.yaml', 'workloads-foo.yaml'],
    });
    await mesh.waitReady(30_000);

    // The add-on as the double stores it: a running pod labelled app=prometheus in mesh-system.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(mesh.kubeconfigPath ?? '');
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({
      namespace: 'mesh-system',
      body: {
        metadata: { name: 'prometheus', labels: { app: 'prometheus' } },
        spec: { containers: [{ name: 'prometheus', image: 'prom/prometheus', ports: [{ containerPort: 9090 }] }] },
      },
    });
    await core.replaceNamespacedPodStatus({
      name: 'prometheus',
      namespace: 'mesh-system',
      body: { ...created, status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } },
    });

    // Every proxy's 15090, scraped every second.
    const targets = mesh.workloads.filter((workload) => workload.kind !== 'none').map((workload) => `'${workload.podIp}:15090'`);
    const config = join(workDir, 'prometheus.yml');
    writeFileSync(
      config,
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: mesh-proxies\n    metrics_path: /stats/prometheus\n    static_configs:\n      - targets: [${targets.join(', ')}]\n`,
    );
    mkdirSync(join(workDir, 'tsdb'));
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${config}`, `--storage.tsdb.path=${join(workDir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${prometheusPort}`, '--log.level=warn'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let prometheusLog = '';
    prometheus.stderr?.on('data', (chunk: Buffer) => (prometheusLog = (prometheusLog + chunk.toString()).slice(-2000)));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${prometheusPort}/-/ready`)).ok, {
      timeoutMs: 15_000,
      intervalMs: 100,
      description: `prometheus ready (${prometheusLog})`,
    });
  }, 90_000);

  afterAll(async () => {
    await stopProcess(prometheus);
    await mesh?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  }, 30_000);

  test('requests per second, the 5xx share and latency quantiles from the server side', async () => {
    // First every series (200, 503, 404) once, until Prometheus holds it: a counter's first sample is no increase.
    await send({ '/headers': 1, '/status/503': 1, '/missing': 1 });
    await waitFor(async () => (await query(`count(mesh_requests_total{${SELECTOR}})`)) >= 3, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: 'Prometheus scraping the three series',
    });
    // The labels the proxy took from its pod (downward API labels, node metadata) and its peer's certificate.
    expect(
      await query(
        `count(mesh_requests_total{${SELECTOR},destination_app="httpbin",destination_version="v1",source_workload="sleep-foo",source_principal="spiffe://cluster.local/ns/foo/sa/sleep",connection_security_policy="mutual_tls"})`,
      ),
    ).toBe(3);

    await send({ '/headers': 20, '/status/503': 10, '/missing': 5 });
    await waitFor(async () => (await query(`sum(mesh_requests_total{${SELECTOR}})`)) >= 38, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: 'Prometheus scraping the second batch',
    });

    const result = await runBin('meshctl', ['x', 'metrics', 'httpbin-foo.foo'], { env: { KUBECONFIG: mesh?.kubeconfigPath ?? '' }, timeoutMs: 30_000 });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const [header = '', row = ''] = result.stdout.split('\n');
    expect(header.trim().split(/\s{2,}/)).toEqual(['WORKLOAD', 'TOTAL RPS', 'ERROR RPS', 'P50 LATENCY', 'P90 LATENCY', 'P99 LATENCY']);
    const [workload, total, errors, ...latencies] = row.trim().split(/\s+/);
    expect(workload).toBe('httpbin-foo.foo');
    expect(total).toMatch(/^\d+\.\d{3}$/);
    expect(Number(total)).toBeGreaterThan(0);
    // 10 of the 35 counted requests failed with 503 (the 404s are no server errors).
    expect(Number(errors) / Number(total)).toBeCloseTo(10 / 35, 1);
    const millis = latencies.map((text) => {
      const match = /^(\d+(?:\.\d+)?)(µs|ms|s)$/.exec(text);
      if (!match) throw new Error(`not a latency: ${text} in ${row}`);
      return Number(match[1]) * (match[2] === 'µs' ? 0.001 : match[2] === 's' ? 1000 : 1);
    });
    expect(millis).toHaveLength(3);
    expect(millis[0]).toBeGreaterThan(0);
    expect(millis[0]).toBeLessThanOrEqual(millis[1] ?? 0);
    expect(millis[1]).toBeLessThanOrEqual(millis[2] ?? 0);
  }, 60_000);

  test('no add-on in the namespace: one line naming the label, exit 1', async () => {
    const result = await runBin('meshctl', ['x', 'm', 'httpbin-foo.foo', '-i', 'foo'], { env: { KUBECONFIG: mesh?.kubeconfigPath ?? '' } });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('app=prometheus');
  });
});
