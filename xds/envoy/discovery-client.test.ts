import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Metadata, Server, ServerCredentials, credentials, status, type ServerDuplexStream } from '@grpc/grpc-js';
import { newDiscoveryClient, type DiscoveryClient, type DiscoveryClientOptions, type DiscoveryResponse } from './discovery-client.js';
import type { StreamEnd } from './discovery-stream.js';
import { ADS_SERVICE, SDS_SERVICE, loadEnvoyProtos } from './envoy-protos.js';
import { newRawDiscoveryCodec } from './raw-discovery-codec.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, SECRET_TYPE } from './type-urls.js';

type Request = Record<string, unknown> & {
  type_url: string;
  version_info: string;
  response_nonce: string;
  resource_names: string[];
  node: { id: string } | null;
  error_detail: { code: number; message: string } | null;
};
type Stream = ServerDuplexStream<Request, object>;

const protos = loadEnvoyProtos();
const cluster = (name: string) => protos.encodeAny(CLUSTER_TYPE, { name, type: 'EDS', connect_timeout: { seconds: 1 } });

/** A server that records every stream and its requests, and answers only when told. */
let server: Server;
let port: number;
const streams: { call: Stream; requests: Request[] }[] = [];
let client: DiscoveryClient | undefined;

async function until<T>(check: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const request = (stream: number, index: number): Promise<Request> => until(() => streams[stream]?.requests[index], `request ${index} of stream ${stream}`);

beforeAll(async () => {
  server = new Server();
  const record = (call: Stream): void => {
    const entry = { call, requests: [] as Request[] };
    streams.push(entry);
    call.on('data', (message: Request) => entry.requests.push(message));
    call.on('error', () => undefined);
  };
  server.addService(protos.serviceDefinition(ADS_SERVICE), { StreamAggregatedResources: record });
  server.addService(protos.serviceDefinition(SDS_SERVICE), { StreamSecrets: record });
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
});

afterEach(() => {
  client?.close();
  client = undefined;
  for (const { call } of streams.splice(0)) call.end();
});

afterAll(() => server.forceShutdown());

function start(options: Partial<DiscoveryClientOptions>): { client: DiscoveryClient; responses: DiscoveryResponse[]; ends: StreamEnd[] } {
  const responses: DiscoveryResponse[] = [];
  const ends: StreamEnd[] = [];
  client = newDiscoveryClient({
    protos,
    target: `127.0.0.1:${port}`,
    credentials: credentials.createInsecure(),
    node: { id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local' },
    onResponse: (response) => responses.push(response),
    onStreamEnd: (end) => ends.push(end),
    ...options,
  });
  client.start();
  return { client, responses, ends };
}

describe('the discovery client', () => {
  test('subscribes, ACKs with the new version, NACKs keeping the last one, and follows names', async () => {
    const { client, responses } = start({
      initial: [
        [CLUSTER_TYPE, []],
        [LISTENER_TYPE, []],
      ],
    });
    expect(await request(0, 0)).toMatchObject({
      type_url: CLUSTER_TYPE,
      resource_names: [],
      version_info: '',
      response_nonce: '',
      node: { id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local' },
    });
    expect(await request(0, 1)).toMatchObject({ type_url: LISTENER_TYPE, resource_names: [] });
    const stream = streams[0]!.call;
    stream.write({ version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1', resources: [cluster('a')] });
    const first = await until(() => responses[0], 'the first response');
    expect(client.decode(first)).toEqual([expect.objectContaining({ name: 'a', type: 'EDS' })]);
    client.ack(first);
    expect(await request(0, 2)).toMatchObject({ type_url: CLUSTER_TYPE, version_info: 'v1', response_nonce: 'n1', error_detail: null });
    client.subscribe(ENDPOINT_TYPE, ['a']);
    client.subscribe(ENDPOINT_TYPE, ['a']);
    expect(await request(0, 3)).toMatchObject({ type_url: ENDPOINT_TYPE, resource_names: ['a'], version_info: '', response_nonce: '' });
    stream.write({ version_info: 'v2', type_url: CLUSTER_TYPE, nonce: 'n2', resources: [cluster('b')] });
    client.nack(await until(() => responses[1], 'the second response'), 'cluster b: no');
    expect(await request(0, 4)).toMatchObject({
      type_url: CLUSTER_TYPE,
      version_info: 'v1',
      response_nonce: 'n2',
      error_detail: { code: 3, message: 'cluster b: no' },
    });
    expect(streams[0]!.requests).toHaveLength(5);
  });

  test('raw: the envelope and the encoded size only; ACKs may go without the node', async () => {
    const { client, responses } = start({ raw: newRawDiscoveryCodec(protos), nodeOnAcks: false, initial: [[CLUSTER_TYPE, []]] });
    await request(0, 0);
    streams[0]!.call.write({ version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1', resources: [cluster('a')] });
    const response = await until(() => responses[0], 'the response');
    expect(response).toMatchObject({ version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1' });
    expect(response.bytes).toBeGreaterThan(0);
    expect(Buffer.from(response.resources[0]!.value).equals(Buffer.from(cluster('a').value))).toBe(true);
    client.ack(response);
    expect(await request(0, 1)).toMatchObject({ version_info: 'v1', response_nonce: 'n1', node: null });
  });

  test('responses written back to back arrive whole: the server reuses its output buffer only after grpc-js has copied it', async () => {
    const { client, responses } = start({ initial: [[CLUSTER_TYPE, []]] });
    await request(0, 0);
    const sizes = [300, 1, 2000, 5, 300];
    const names = (count: number, round: number) => Array.from({ length: count }, (_, i) => `outbound|80||svc-${round}-${i}.ns.svc.cluster.local`);
    // All written in one turn of the event loop, a large response before a smaller one and after it.
    sizes.forEach((count, round) =>
      streams[0]!.call.write({ version_info: `v${round}`, type_url: CLUSTER_TYPE, nonce: `n${round}`, resources: names(count, round).map(cluster) }),
    );
    await until(() => responses[sizes.length - 1], 'every response');
    sizes.forEach((count, round) => {
      expect(responses[round]).toMatchObject({ version_info: `v${round}`, nonce: `n${round}` });
      expect(client.decode(responses[round]!).map((decoded) => (decoded as { name: string }).name)).toEqual(names(count, round));
    });
  });

  test('a broken stream is reopened after a jittered backoff, subscribing again with the versions accepted', async () => {
    const { client, responses, ends } = start({ initial: [[CLUSTER_TYPE, []]], reconnect: { firstMs: 40 }, metadata: () => Promise.resolve(new Metadata()) });
    await request(0, 0);
    streams[0]!.call.write({ version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1', resources: [] });
    client.ack(await until(() => responses[0], 'the response'));
    await request(0, 1);
    streams[0]!.call.emit('error', { code: status.UNAVAILABLE, details: 'going away' });
    const end = await until(() => ends[0], 'the end of the stream');
    expect(end.error).toBeDefined();
    expect(end.retryMs).toBeGreaterThanOrEqual(20);
    expect(end.retryMs).toBeLessThanOrEqual(40);
    expect(await request(1, 0)).toMatchObject({ type_url: CLUSTER_TYPE, version_info: 'v1', response_nonce: '' });
    // The next failure waits twice as long.
    streams[1]!.call.emit('error', { code: status.UNAVAILABLE, details: 'going away' });
    const second = await until(() => ends[1], 'the second end');
    expect(second.retryMs).toBeGreaterThanOrEqual(40);
    expect(second.retryMs).toBeLessThanOrEqual(80);
  });

  test('call metadata that cannot be read counts as a failed attempt', async () => {
    let reads = 0;
    const { ends } = start({
      initial: [[CLUSTER_TYPE, []]],
      reconnect: { firstMs: 10 },
      metadata: () => {
        if (++reads === 1) throw new Error('no token yet');
        return new Metadata();
      },
    });
    expect((await until(() => ends[0], 'the failed attempt')).reason).toContain('no token yet');
    await request(0, 0);
  });

  test('after close: no reconnect and no report', async () => {
    const { client, ends } = start({ initial: [[CLUSTER_TYPE, []]], reconnect: { firstMs: 10 } });
    await request(0, 0);
    client.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ends).toEqual([]);
    expect(streams).toHaveLength(1);
  });

  test('SDS: the secret service, fixed retry when asked', async () => {
    const { ends } = start({ service: 'sds', initial: [[SECRET_TYPE, ['default', 'ROOTCA']]], reconnect: { firstMs: 30, maxMs: 30, jitter: false } });
    expect(await request(0, 0)).toMatchObject({ type_url: SECRET_TYPE, resource_names: ['default', 'ROOTCA'] });
    streams[0]!.call.end();
    expect((await until(() => ends[0], 'the end')).retryMs).toBe(30);
    await request(1, 0);
  });

  test('unmanaged streams for tests, state of the world and delta', async () => {
    client = newDiscoveryClient({ protos, target: `127.0.0.1:${port}`, credentials: credentials.createInsecure() });
    const call = client.stream();
    call.on('error', () => undefined);
    call.write({ type_url: CLUSTER_TYPE, resource_names: [] });
    await request(0, 0);
    streams[0]!.call.write({ version_info: 'v9', type_url: CLUSTER_TYPE, nonce: 'n', resources: [] });
    const response = await new Promise<DiscoveryResponse>((resolve) => call.once('data', resolve));
    expect(response.version_info).toBe('v9');
    const delta = client.stream({ delta: true });
    const ended = await new Promise<{ code: number }>((resolve) => delta.on('error', resolve));
    expect(ended.code).toBe(status.UNIMPLEMENTED);
  });
});
