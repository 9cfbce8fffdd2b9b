import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, test } from '@jest/globals';
import { expectGoldenText } from '../../testing/golden.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { queryScalar, workloadMetrics } from './metrics-query.js';
import { formatLatency, metricsQueries, parseWorkloadTarget, renderWorkloadMetrics } from './workload-metrics.js';

const TESTDATA = join(PROJECT_ROOT, 'meshctl', 'metrics', 'testdata');

describe('x metrics: the table and its queries', () => {
  test('the reference table: right-aligned, rps with 3 decimals, latencies as Go durations (golden)', () => {
    const table = renderWorkloadMetrics([
      { workload: 'httpbin-foo.foo', totalRps: 2.5, errorRps: 0.8333333, p50Ms: 4.2, p90Ms: 21, p99Ms: 1500 },
      { workload: 'productpage-v1', totalRps: 0, errorRps: 0, p50Ms: NaN, p90Ms: NaN, p99Ms: NaN },
    ]);
    expectGoldenText(join(TESTDATA, 'metrics-table.golden.txt'), table);
    const [header = '', row = ''] = table.split('\n');
    expect(header.endsWith('P99 LATENCY')).toBe(true);
    expect(row.indexOf('2.500') + '2.500'.length).toBe(header.indexOf('TOTAL RPS') + 'TOTAL RPS'.length);
  });

  it.each([
    [NaN, '0s'],
    [0, '0s'],
    [0.45, '450µs'],
    [21, '21ms'],
    [1.5, '1.5ms'],
    [4.2, '4.2ms'],
    [2250, '2.25s'],
    [90_000, '1m30s'],
  ])('latency %s ms prints %s', (ms, text) => {
    expect(formatLatency(ms)).toBe(text);
  });

  test('server-side queries over one minute, 5xx as errors, quantiles from the duration histogram', () => {
    const queries = metricsQueries({ name: 'httpbin-foo', namespace: 'foo' });
    expect(queries.totalRps).toBe(
      'sum(rate(mesh_requests_total{destination_workload="httpbin-foo",destination_workload_namespace="foo",reporter="destination"}[1m]))',
    );
    expect(queries.errorRps).toBe(
      'sum(rate(mesh_requests_total{destination_workload="httpbin-foo",destination_workload_namespace="foo",reporter="destination",response_code=~"5.."}[1m]))',
    );
    expect(queries.p90Ms).toBe(
      'histogram_quantile(0.9, sum(rate(mesh_request_duration_milliseconds_bucket{destination_workload="httpbin-foo",destination_workload_namespace="foo",reporter="destination"}[1m])) by (le))',
    );
    expect(metricsQueries({ name: 'httpbin' }).totalRps).not.toContain('destination_workload_namespace');
  });

  it.each(['', 'a.b.c', 'Bad', 'x"}', 'name.'])('%j is a usage error (exit 64)', (text) => {
    expect(() => parseWorkloadTarget(text)).toThrow(expect.objectContaining({ exitCode: 64 }));
  });
});

describe('x metrics: the Prometheus HTTP API', () => {
  let server: Server;
  let baseUrl: string;
  const answers = new Map<string, { status: number; body: string }>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? '';
      const answer = [...answers].find(([match]) => query.includes(match))?.[1] ?? {
        status: 200,
        body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }),
      };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a vector sample is read; an empty result is 0; NaN stays NaN', async () => {
    answers.set('one', {
      status: 200,
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '1.25'] }] } }),
    });
    answers.set('nan', {
      status: 200,
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, 'NaN'] }] } }),
    });
    expect(await queryScalar(baseUrl, 'one')).toBe(1.25);
    expect(await queryScalar(baseUrl, 'empty')).toBe(0);
    expect(await queryScalar(baseUrl, 'nan')).toBeNaN();
  });

  test('a failed query names the workload and what the metrics store said', async () => {
    answers.set('broken-app', { status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 3' }) });
    await expect(workloadMetrics(baseUrl, { name: 'broken-app' }, 'broken-app')).rejects.toThrow(
      "could not build metrics for workload 'broken-app': error querying the metrics store: bad_data: parse error at char 3",
    );
    answers.set('html-app', { status: 502, body: '<html>bad gateway</html>' });
    await expect(workloadMetrics(baseUrl, { name: 'html-app' }, 'html-app')).rejects.toThrow('HTTP 502: <html>bad gateway</html>');
  });

  test('an unreachable metrics store is one clear error', async () => {
    await expect(queryScalar('http://127.0.0.1:1', 'x', 2000)).rejects.toThrow(/^error querying the metrics store: /);
  });
});
