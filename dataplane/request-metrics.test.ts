import { connect as netConnect, createServer, type Server } from 'node:net';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl, echoedHeaders } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import { PEER_METADATA_HEADER, PEER_METADATA_ID_HEADER } from './peer-metadata.js';
import { parsePrometheusText, samplesOf, sumOf, type Sample } from './testing/prometheus-text.js';
import { ECHO_SERVICE, ECHO_TCP_PORT, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// The mesh's request metrics from both sidecars of the two-sidecar fixture (PERMISSIVE, so that an
// unmeshed caller reaches the server in plain text), driven by the real curl; and TCP through a
// second Service of the same workload with a TCP echo behind it.
const SUBNET = 64;
const SERVER_POD = `127.${SUBNET}.1.2`;
const SERVER_APP = `127.${SUBNET}.2.2`;
const TCP_PORT = ECHO_TCP_PORT;
/** A Service port of the same workload where its app listens on nothing: the server sidecar's connection fails (UF). */
const DEAD_PORT = 8001;
const DEAD_SERVICE = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'dead', namespace: 'bar' },
  spec: { clusterIP: '10.96.0.12', selector: { app: 'httpbin' }, ports: [{ name: 'http', port: DEAD_PORT, targetPort: DEAD_PORT }] },
};
const SLEEP = 'spiffe://cluster.local/ns/foo/sa/sleep';
const HTTPBIN = 'spiffe://cluster.local/ns/bar/sa/httpbin';

let mesh: TwoSidecars;
let echo: Server;

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(TCP_PORT, SERVER_APP, resolve));
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: [ECHO_SERVICE, DEAD_SERVICE], serverPorts: [8000, TCP_PORT, DEAD_PORT] });
});

afterAll(async () => {
  await mesh?.close();
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

const scrape = (side: 'server' | 'client'): Sample[] => parsePrometheusText((side === 'server' ? mesh.serverPlane : mesh.clientPlane).stats.prometheus());
const viaClient = (path: string, extra: readonly string[] = []): ReturnType<typeof curl> =>
  curl([...extra, '-x', mesh.proxyUrl, `http://httpbin.bar:8000${path}`]);

describe('request metrics of the embedded data plane', () => {
  test('meshed traffic: counts per code, every standard label on both sides, the exchange headers never reach the apps', async () => {
    const codes: string[] = [];
    for (const path of ['/headers', '/headers', '/headers', '/status/404', '/status/503', '/status/503']) codes.push((await viaClient(path)).code);
    expect(codes).toEqual(['200', '200', '200', '404', '503', '503']);
    const echoed = await viaClient('/headers', ['-D', '-']);
    // The server app sees no exchange header; the client app gets none back.
    expect(echoed.body).not.toMatch(/x-mesh-peer-metadata/i);
    const server = await waitFor(() => {
      const samples = scrape('server');
      return sumOf(samples, 'mesh_requests_total') === 7 ? samples : undefined;
    });
    const inbound = {
      reporter: 'destination',
      source_workload: 'sleep',
      source_workload_namespace: 'foo',
      source_principal: SLEEP,
      source_app: 'sleep',
      source_version: 'unknown',
      source_cluster: 'Kubernetes',
    };
    const destination = {
      destination_workload: 'httpbin',
      destination_workload_namespace: 'bar',
      destination_principal: HTTPBIN,
      destination_app: 'httpbin',
      destination_version: 'v1',
      destination_service: 'httpbin.bar.svc.cluster.local',
      destination_service_name: 'httpbin',
      destination_service_namespace: 'bar',
      destination_cluster: 'Kubernetes',
    };
    const ok = samplesOf(server, 'mesh_requests_total', { ...inbound, ...destination, response_code: '200' });
    expect(ok).toHaveLength(1);
    expect(ok[0]?.labels).toEqual({
      ...inbound,
      ...destination,
      request_protocol: 'http',
      response_code: '200',
      grpc_response_status: '',
      response_flags: '-',
      connection_security_policy: 'mutual_tls',
    });
    expect(ok[0]?.value).toBe(4);
    expect(sumOf(server, 'mesh_requests_total', { ...inbound, response_code: '404' })).toBe(1);
    expect(sumOf(server, 'mesh_requests_total', { ...inbound, response_code: '503' })).toBe(2);
    expect(sumOf(server, 'mesh_request_duration_milliseconds_count', { ...inbound })).toBe(7);
    expect(sumOf(server, 'mesh_request_duration_milliseconds_bucket', { ...inbound, response_code: '200', le: '+Inf' })).toBe(4);

    const client = await waitFor(() => {
      const samples = scrape('client');
      return sumOf(samples, 'mesh_requests_total') === 7 ? samples : undefined;
    });
    const outbound = samplesOf(client, 'mesh_requests_total', { reporter: 'source', response_code: '503' });
    expect(outbound).toHaveLength(1);
    expect(outbound[0]?.labels).toMatchObject({
      source_workload: 'sleep',
      source_workload_namespace: 'foo',
      source_principal: SLEEP,
      ...destination,
      response_flags: '-',
      connection_security_policy: 'mutual_tls',
    });
    expect(outbound[0]?.value).toBe(2);
  });

  test('request and response sizes land in the byte histograms', async () => {
    const before = sumOf(scrape('server'), 'mesh_request_bytes_sum', { reporter: 'destination' });
    const result = await viaClient('/anything', ['-X', 'POST', '--data-binary', 'x'.repeat(1234)]);
    expect(result.code).toBe('200');
    const server = await waitFor(() => {
      const samples = scrape('server');
      return sumOf(samples, 'mesh_request_bytes_sum', { reporter: 'destination' }) > before ? samples : undefined;
    });
    expect(sumOf(server, 'mesh_request_bytes_sum', { reporter: 'destination' }) - before).toBe(1234);
    expect(sumOf(server, 'mesh_request_bytes_bucket', { reporter: 'destination', le: '10000' })).toBeGreaterThanOrEqual(1);
    expect(sumOf(server, 'mesh_response_bytes_sum', { reporter: 'destination', response_code: '200' })).toBeGreaterThan(0);
  });

  test('a forged peer metadata header from an unmeshed plain-text caller is not believed, and stripped', async () => {
    const forged = Buffer.from(JSON.stringify({ WORKLOAD_NAME: 'sleep', NAMESPACE: 'foo', LABELS: { app: 'sleep' }, CLUSTER_ID: 'Kubernetes' })).toString(
      'base64',
    );
    const result = await curl([
      '-H',
      `${PEER_METADATA_HEADER}: ${forged}`,
      '-H',
      `${PEER_METADATA_ID_HEADER}: sidecar~1.2.3.4~evil.foo~foo.svc.cluster.local`,
      `http://${SERVER_POD}:8000/headers`,
    ]);
    expect(result.code).toBe('200');
    expect(Object.keys(echoedHeaders(result.body))).not.toContain(PEER_METADATA_HEADER);
    expect(Object.keys(echoedHeaders(result.body))).not.toContain(PEER_METADATA_ID_HEADER);
    const server = await waitFor(() => {
      const samples = samplesOf(scrape('server'), 'mesh_requests_total', { connection_security_policy: 'none' });
      return samples.length > 0 ? samples : undefined;
    });
    expect(server).toHaveLength(1);
    expect(server[0]?.labels).toMatchObject({
      reporter: 'destination',
      source_workload: 'unknown',
      source_workload_namespace: 'unknown',
      source_principal: 'unknown',
      source_app: 'unknown',
      destination_workload: 'httpbin',
    });
    // The client app's own forgery is replaced by its sidecar's word.
    const meshed = await viaClient('/headers', [
      '-H',
      `${PEER_METADATA_HEADER}: ${Buffer.from(JSON.stringify({ WORKLOAD_NAME: 'evil', NAMESPACE: 'foo' })).toString('base64')}`,
    ]);
    expect(meshed.code).toBe('200');
    expect(samplesOf(scrape('server'), 'mesh_requests_total', { source_workload: 'evil' })).toEqual([]);
  });

  test('an upstream connection failure: 503 with response flag UF on the server side, the client side sees the 503', async () => {
    const result = await curl(['-x', mesh.proxyUrl, `http://dead.bar:${DEAD_PORT}/headers`]);
    expect(result.code).toBe('503');
    const server = await waitFor(() => {
      const samples = samplesOf(scrape('server'), 'mesh_requests_total', { response_flags: 'UF' });
      return samples.length > 0 ? samples : undefined;
    });
    expect(server[0]?.labels).toMatchObject({
      reporter: 'destination',
      response_code: '503',
      source_workload: 'sleep',
      destination_service: 'dead.bar.svc.cluster.local',
    });
    const client = samplesOf(scrape('client'), 'mesh_requests_total', { destination_service: 'dead.bar.svc.cluster.local' });
    expect(client[0]?.labels).toMatchObject({ reporter: 'source', response_code: '503', response_flags: '-', destination_service_name: 'dead' });
  });

  test('TCP: connections opened and closed, bytes each way, over mutual TLS and in plain text', async () => {
    const secrets = mesh.secretsFor(SLEEP);
    const certificate = secrets.certificates.get('default');
    const exchange = (tls: boolean): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = tls
          ? connect({
              host: SERVER_POD,
              port: TCP_PORT,
              cert: certificate?.certificateChain,
              key: certificate?.privateKey,
              ca: secrets.trustedCas.get('ROOTCA'),
              checkServerIdentity: () => undefined,
            })
          : netConnect({ host: SERVER_POD, port: TCP_PORT });
        let received = '';
        socket.on(tls ? 'secureConnect' : 'connect', () => socket.write('hello, echo\n'));
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString();
          if (received.endsWith('\n')) socket.end();
        });
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
    expect(await exchange(true)).toBe('hello, echo\n');
    expect(await exchange(false)).toBe('hello, echo\n');
    const server = await waitFor(() => {
      const samples = scrape('server');
      return sumOf(samples, 'mesh_tcp_connections_closed_total') === 2 ? samples : undefined;
    });
    const mtls = {
      reporter: 'destination',
      source_principal: SLEEP,
      source_workload_namespace: 'foo',
      destination_workload: 'httpbin',
      request_protocol: 'tcp',
      connection_security_policy: 'mutual_tls',
    };
    expect(sumOf(server, 'mesh_tcp_connections_opened_total', mtls)).toBe(1);
    expect(sumOf(server, 'mesh_tcp_received_bytes_total', mtls)).toBe(12);
    expect(sumOf(server, 'mesh_tcp_sent_bytes_total', mtls)).toBe(12);
    const plain = { reporter: 'destination', source_principal: 'unknown', connection_security_policy: 'none', request_protocol: 'tcp' };
    expect(sumOf(server, 'mesh_tcp_connections_opened_total', plain)).toBe(1);
    expect(sumOf(server, 'mesh_tcp_received_bytes_total', plain)).toBe(12);
    const labels = samplesOf(server, 'mesh_tcp_sent_bytes_total', plain)[0]?.labels ?? {};
    expect(Object.keys(labels)).not.toContain('response_code');
  });

  test('response sizes are the body bytes, counted once, over HTTP/1.1 and HTTP/2, proxied and local replies', async () => {
    // `%00` in the path: the server sidecar's own 400 reply.
    for (const [version, path, code] of [
      ['--http1.1', '/headers', '200'],
      ['--http2-prior-knowledge', '/headers', '200'],
      ['--http1.1', '/a%00b', '400'],
      ['--http2-prior-knowledge', '/a%00b', '400'],
    ] as const) {
      const plain = { reporter: 'destination', connection_security_policy: 'none', response_code: code };
      const before = scrape('server');
      const result = await curl([version, `http://${SERVER_POD}:8000${path}`]);
      expect(result.code).toBe(code);
      const after = await waitFor(() => {
        const samples = scrape('server');
        return sumOf(samples, 'mesh_response_bytes_count', plain) > sumOf(before, 'mesh_response_bytes_count', plain) ? samples : undefined;
      });
      expect(sumOf(after, 'mesh_response_bytes_sum', plain) - sumOf(before, 'mesh_response_bytes_sum', plain)).toBe(Buffer.byteLength(result.body));
    }
  });
});
