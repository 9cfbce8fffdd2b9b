import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, test } from '@jest/globals';
import { newMeshMetrics, REQUEST_LABELS, type RequestLabels } from './mesh-metrics.js';
import { decodePeerMetadata, encodePeerMetadata, trustedPeer, workloadFromNodeMetadata } from './peer-metadata.js';
import { newRequestTelemetry, serviceOfHost } from './request-telemetry.js';
import { parsePrometheusText, samplesOf } from './testing/prometheus-text.js';

const KNOWN = new Set(['httpbin.bar.svc.cluster.local', 'echo.bar.svc.cluster.local', 'httpbin.foo.svc.cluster.local']);

describe('inbound destination_service: only services the config knows (bounded cardinality)', () => {
  it.each([
    ['httpbin.bar.svc.cluster.local:8000', 'httpbin.bar.svc.cluster.local'],
    ['httpbin', 'httpbin.bar.svc.cluster.local'],
    ['httpbin.foo', 'httpbin.foo.svc.cluster.local'],
    ['httpbin.foo.svc', 'httpbin.foo.svc.cluster.local'],
    ['HTTPBIN.bar:8000', 'httpbin.bar.svc.cluster.local'],
    ['127.0.0.1:8000', undefined],
    ['random-1234.bar', undefined],
    ['httpbin.bar.evil.example', undefined],
  ])('%s → %s', (host, service) => {
    expect(serviceOfHost(host, 'bar', KNOWN)).toBe(service);
  });
});

describe('peer metadata', () => {
  const workload = { name: 'sleep', namespace: 'foo', app: 'sleep', version: 'v2', cluster: 'Kubernetes' };

  test('round trip through the header, and from node metadata', () => {
    expect(decodePeerMetadata(encodePeerMetadata(workload))).toEqual(workload);
    expect(workloadFromNodeMetadata({ WORKLOAD_NAME: 'sleep', NAMESPACE: 'foo', LABELS: { app: 'sleep', version: 'v2' }, CLUSTER_ID: 'Kubernetes' })).toEqual(
      workload,
    );
    expect(workloadFromNodeMetadata({ POD_NAME: 'sleep-1', NAMESPACE: 'foo' })).toEqual({
      name: 'sleep-1',
      namespace: 'foo',
      app: 'unknown',
      version: 'unknown',
      cluster: 'unknown',
    });
  });

  it.each([
    ['not base64 JSON', '%%%'],
    ['an array', Buffer.from('[1]').toString('base64')],
    ['no namespace', Buffer.from(JSON.stringify({ WORKLOAD_NAME: 'x' })).toString('base64')],
    ['too long', 'A'.repeat(5000)],
  ])('refuses %s', (_, value) => {
    expect(decodePeerMetadata(value)).toBeUndefined();
  });

  test('label values that are not plain names become unknown', () => {
    const decoded = decodePeerMetadata(
      Buffer.from(JSON.stringify({ WORKLOAD_NAME: 'a"b\nc', NAMESPACE: 'foo', LABELS: { app: 'x'.repeat(300) } })).toString('base64'),
    );
    expect(decoded).toMatchObject({ name: 'unknown', namespace: 'foo', app: 'unknown' });
  });

  test('believed only where the certificate proves the namespace', () => {
    expect(trustedPeer(workload, 'spiffe://cluster.local/ns/foo/sa/sleep')).toEqual(workload);
    expect(trustedPeer(workload, 'spiffe://cluster.local/ns/bar/sa/sleep')).toMatchObject({ name: 'unknown', namespace: 'bar' });
    expect(trustedPeer(workload, undefined)).toMatchObject({ name: 'unknown', namespace: 'unknown' });
  });
});

describe('mesh metrics', () => {
  const labels = Object.fromEntries(REQUEST_LABELS.map((name) => [name, 'x'])) as RequestLabels;

  test('histograms are cumulative, with +Inf, sum and count', () => {
    const metrics = newMeshMetrics();
    metrics.recordRequest(labels, 3, 50, 5000);
    metrics.recordRequest(labels, 700, 0, 0);
    const samples = parsePrometheusText(metrics.prometheus());
    const bucket = (le: string): number | undefined => samplesOf(samples, 'mesh_request_duration_milliseconds_bucket', { le })[0]?.value;
    expect([bucket('1'), bucket('5'), bucket('500'), bucket('1000'), bucket('+Inf')]).toEqual([0, 1, 1, 2, 2]);
    expect(samplesOf(samples, 'mesh_request_duration_milliseconds_sum')[0]?.value).toBe(703);
    expect(samplesOf(samples, 'mesh_requests_total')[0]?.value).toBe(2);
    expect(samplesOf(samples, 'mesh_response_bytes_bucket', { le: '1000' })[0]?.value).toBe(1);
  });

  test('a metric holds at most maxSeries label sets; the rest are dropped and counted', () => {
    const metrics = newMeshMetrics(2);
    for (const code of ['200', '404', '503']) metrics.recordRequest({ ...labels, response_code: code }, 1, 0, 0);
    expect(samplesOf(parsePrometheusText(metrics.prometheus()), 'mesh_requests_total')).toHaveLength(2);
    expect(metrics.droppedSeries()).toBeGreaterThan(0);
  });
});

describe('response flags', () => {
  /** A response that finishes when told: what the exchange listens to. */
  const fakeResponse = (status: number): ServerResponse & { done(): void } => {
    const emitter = new EventEmitter() as unknown as ServerResponse & { done(): void };
    Object.assign(emitter, { statusCode: status, headersSent: true, writableFinished: false, write: () => true, end: () => undefined });
    emitter.done = () => void emitter.emit('finish');
    return emitter;
  };
  const run = (flags: readonly string[], finished: boolean): string | undefined => {
    const metrics = newMeshMetrics();
    let clock = 0;
    const telemetry = newRequestTelemetry({
      metrics,
      workload: workloadFromNodeMetadata({ NAMESPACE: 'bar' }),
      nodeId: 'n',
      localUri: () => undefined,
      knownServices: () => KNOWN,
      now: () => (clock += 5),
    });
    const res = fakeResponse(503);
    const exchange = telemetry.beginHttp({}, 'httpbin', res, { direction: 'outbound', mutualTls: false });
    exchange.upstream('outbound|8000||httpbin.bar.svc.cluster.local', false);
    for (const flag of flags) exchange.flag(flag);
    if (finished) res.done();
    else res.emit('close');
    return samplesOf(parsePrometheusText(metrics.prometheus()), 'mesh_requests_total')[0]?.labels['response_flags'];
  };

  it.each([
    [[], true, '-'],
    [['UF'], true, 'UF'],
    [['URX', 'UF'], true, 'URX,UF'],
    [['NR'], true, 'NR'],
    [[], false, 'DC'],
  ])('%j (finished %s) → %s', (flags, finished, expected) => {
    expect(run(flags, finished)).toBe(expected);
  });
});

describe('label sets and peer metadata kept between requests never cross peers', () => {
  const fakeResponse = (status: number): ServerResponse => {
    const emitter = new EventEmitter() as unknown as ServerResponse;
    Object.assign(emitter, { statusCode: status, headersSent: true, writableFinished: true });
    return emitter;
  };
  const header = (name: string, namespace: string): string => encodePeerMetadata({ name, namespace, app: name, version: 'v1', cluster: 'Kubernetes' });

  test('alternating peers, a malformed and an oversized header: each request is labelled by its own peer', () => {
    const metrics = newMeshMetrics();
    const telemetry = newRequestTelemetry({
      metrics,
      workload: workloadFromNodeMetadata({ NAMESPACE: 'bar', WORKLOAD_NAME: 'httpbin' }),
      nodeId: 'n',
      localUri: () => 'spiffe://cluster.local/ns/bar/sa/httpbin',
      knownServices: () => KNOWN,
    });
    const requests = [
      { peer: 'spiffe://cluster.local/ns/foo/sa/sleep', metadata: header('sleep', 'foo'), status: 200 },
      { peer: 'spiffe://cluster.local/ns/baz/sa/curl', metadata: header('curl', 'baz'), status: 200 },
      // A peer claiming another namespace than its certificate's: only the certificate's is believed.
      { peer: 'spiffe://cluster.local/ns/baz/sa/curl', metadata: header('sleep', 'foo'), status: 200 },
      { peer: 'spiffe://cluster.local/ns/foo/sa/sleep', metadata: '%%%', status: 503 },
      { peer: 'spiffe://cluster.local/ns/foo/sa/sleep', metadata: header('x'.repeat(4000), 'foo'), status: 200 },
      { peer: 'spiffe://cluster.local/ns/foo/sa/sleep', metadata: header('sleep', 'foo'), status: 200 },
    ];
    for (const { peer, metadata, status } of requests) {
      const res = fakeResponse(status);
      telemetry.beginHttp({ 'x-mesh-peer-metadata': metadata }, 'httpbin.bar:8000', res, { direction: 'inbound', mutualTls: true, peerUri: peer });
      res.emit('finish');
    }
    const samples = samplesOf(parsePrometheusText(metrics.prometheus()), 'mesh_requests_total');
    const count = (where: Record<string, string>): number =>
      samples.filter((sample) => Object.entries(where).every(([key, value]) => sample.labels[key] === value)).reduce((sum, sample) => sum + sample.value, 0);
    expect(
      count({ source_workload: 'sleep', source_workload_namespace: 'foo', source_principal: 'spiffe://cluster.local/ns/foo/sa/sleep', response_code: '200' }),
    ).toBe(2);
    expect(count({ source_workload: 'curl', source_workload_namespace: 'baz' })).toBe(1);
    expect(count({ source_workload: 'unknown', source_workload_namespace: 'baz', source_principal: 'spiffe://cluster.local/ns/baz/sa/curl' })).toBe(1);
    expect(count({ source_workload: 'unknown', source_workload_namespace: 'foo', response_code: '503' })).toBe(1);
    expect(count({ source_workload: 'unknown', source_workload_namespace: 'foo', response_code: '200' })).toBe(1);
    expect(samples.reduce((sum, sample) => sum + sample.value, 0)).toBe(requests.length);
  });
});
