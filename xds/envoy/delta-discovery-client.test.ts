import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { credentials, Metadata } from '@grpc/grpc-js';
import { waitFor } from '../../testing/wait-for.js';
import { metricValue, nodeFor, startTestXds, type TestXds } from '../testing/test-support.js';
import type { XdsConnection } from '../xds-connection.js';
import { newDeltaDiscoveryClient, type DeltaDiscoveryClient, type DeltaDiscoveryClientOptions, type DeltaDiscoveryResponse } from './delta-discovery-client.js';
import { loadEnvoyProtos } from './envoy-protos.js';
import { newRawDiscoveryCodec } from './raw-discovery-codec.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE } from './type-urls.js';

// The delta client against the daemon's real ADS server (the test world's generators).
const protos = loadEnvoyProtos();
let env: TestXds;
let client: DeltaDiscoveryClient | undefined;
let pod = 0;

beforeAll(async () => {
  env = await startTestXds(protos);
});

afterAll(() => env.close());

beforeEach(async () => {
  env.world.clusters = { a: [{ address: '10.0.0.1', port: 80 }], b: [{ address: '10.0.0.2', port: 80 }] };
  await env.sync();
});

afterEach(async () => {
  client?.close();
  client = undefined;
  await waitFor(() => env.discovery.connections().length === 0, { description: 'the test’s streams closed' });
});

interface Started {
  client: DeltaDiscoveryClient;
  responses: DeltaDiscoveryResponse[];
  proxyId: string;
  /** The response after `count` of them, ACKed unless told otherwise. */
  next(count: number, ack?: boolean): Promise<DeltaDiscoveryResponse>;
}

function start(options: Partial<DeltaDiscoveryClientOptions> = {}): Started {
  const name = `delta-${++pod}`;
  const responses: DeltaDiscoveryResponse[] = [];
  const started = newDeltaDiscoveryClient({
    protos,
    target: `127.0.0.1:${env.port}`,
    credentials: credentials.createInsecure(),
    node: nodeFor(name, 'default'),
    initial: [[CLUSTER_TYPE, []]],
    onResponse: (response) => responses.push(response),
    ...options,
  });
  client = started;
  started.start();
  return {
    client: started,
    responses,
    proxyId: `${name}.default`,
    async next(count, ack = true) {
      await waitFor(() => responses.length > count, { description: `response ${count + 1}` });
      const response = responses[count] as DeltaDiscoveryResponse;
      if (ack) started.ack(response);
      return response;
    },
  };
}

const names = (response: DeltaDiscoveryResponse): string[] => response.resources.map((resource) => resource.name).sort();
const acked = (con: XdsConnection | undefined, typeUrl: string): boolean => {
  const watch = con?.watches.get(typeUrl);
  return watch !== undefined && watch.nonceSent !== '' && watch.nonceAcked === watch.nonceSent;
};

describe('the delta discovery client against the daemon', () => {
  test('a wildcard CDS and EDS by name: ACKs recorded, names subscribed and unsubscribed as changes', async () => {
    const { client, next, proxyId } = start();
    const clusters = await next(0);
    expect(names(clusters)).toEqual(['a', 'b']);
    expect(client.decode(clusters).resources.map((resource) => resource.resource)).toEqual([
      expect.objectContaining({ name: 'a', type: 'EDS' }),
      expect.objectContaining({ name: 'b', type: 'EDS' }),
    ]);
    await waitFor(() => acked(env.discovery.findConnection(proxyId), CLUSTER_TYPE), { description: 'CDS ACKed' });
    expect(env.discovery.findConnection(proxyId)?.watches.get(CLUSTER_TYPE)?.wildcard).toBe(true);

    client.subscribe(ENDPOINT_TYPE, ['a', 'b']);
    expect(names(await next(1))).toEqual(['a', 'b']);
    client.subscribe(ENDPOINT_TYPE, ['a']);
    await waitFor(() => env.discovery.findConnection(proxyId)?.watches.get(ENDPOINT_TYPE)?.names.join() === 'a', { description: 'b unsubscribed' });
    expect([...client.versions(ENDPOINT_TYPE).keys()]).toEqual(['a']);
  });

  test('a push brings only what changed, and removals; the versions held follow', async () => {
    const { client, next } = start();
    const first = await next(0);
    env.world.clusters['c'] = [];
    delete env.world.clusters['b'];
    env.push();
    const pushed = await next(1);
    expect(names(pushed)).toEqual(['c']);
    expect(pushed.removed_resources).toEqual(['b']);
    expect(Object.fromEntries(client.versions(CLUSTER_TYPE))).toEqual({
      a: first.resources.find((resource) => resource.name === 'a')?.version,
      c: pushed.resources[0]?.version,
    });
  });

  test('a NACK is recorded by the daemon and leaves the versions held as they were; a stale ACK after it is ignored', async () => {
    const { client, next, proxyId } = start();
    const first = await next(0);
    await waitFor(() => acked(env.discovery.findConnection(proxyId), CLUSTER_TYPE), { description: 'CDS ACKed' });
    const before = Object.fromEntries(client.versions(CLUSTER_TYPE));
    expect(Object.keys(before).sort()).toEqual(['a', 'b']);
    env.world.clusters['a'] = [{ address: '10.9.9.9', port: 1 }];
    env.world.clusters['d'] = [];
    env.push();
    const pushed = await next(1, false);
    client.nack(pushed, 'cluster d: no');
    await waitFor(() => env.discovery.findConnection(proxyId)?.watches.get(CLUSTER_TYPE)?.lastError === 'cluster d: no', { description: 'NACK recorded' });
    expect(Object.fromEntries(client.versions(CLUSTER_TYPE))).toEqual(before);
    // An ACK of the earlier response now carries a stale nonce: the daemon ignores it and keeps the NACK.
    const expired = await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' });
    const watch = env.discovery.findConnection(proxyId)?.watches.get(CLUSTER_TYPE);
    client.ack(first);
    await waitFor(async () => (await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' })) === expired + 1, {
      description: 'the stale nonce counted',
    });
    expect(env.discovery.findConnection(proxyId)?.watches.get(CLUSTER_TYPE)).toEqual(watch);
    expect(watch).toMatchObject({ nonceSent: pushed.nonce, nonceAcked: first.nonce, lastError: 'cluster d: no' });
  });

  test('a reopened stream announces the versions held: only what changed meanwhile comes, and the removals', async () => {
    // Each (re)connect reads the call metadata: the second one waits for the test.
    let opened = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { client, next, responses, proxyId } = start({
      reconnect: { firstMs: 10, jitter: false },
      metadata: async () => {
        if (++opened > 1) await gate;
        return new Metadata();
      },
    });
    await next(0);
    client.subscribe(ENDPOINT_TYPE, ['a', 'b']);
    const endpoints = await next(1);
    await waitFor(() => acked(env.discovery.findConnection(proxyId), ENDPOINT_TYPE), { description: 'EDS ACKed' });
    const edsVersions = Object.fromEntries(client.versions(ENDPOINT_TYPE));
    expect(Object.keys(edsVersions).sort()).toEqual(['a', 'b']);

    const first = env.discovery.findConnection(proxyId) as XdsConnection;
    env.discovery.forceDisconnect(first);
    await waitFor(() => opened === 2 && env.discovery.findConnection(proxyId) === undefined, { description: 'the stream gone, a new one waiting' });
    env.world.clusters['b'] = [{ address: '10.0.0.20', port: 80 }];
    delete env.world.clusters['a'];
    await env.sync();
    release();

    const clusters = await next(2);
    const eds = await next(3);
    expect([clusters.type_url, eds.type_url]).toEqual([CLUSTER_TYPE, ENDPOINT_TYPE]);
    // b's cluster is the same message: not resent; a is gone.
    expect(names(clusters)).toEqual([]);
    expect(clusters.removed_resources).toEqual(['a']);
    expect(names(eds)).toEqual(['b']);
    expect(eds.removed_resources).toEqual(['a']);
    expect(eds.resources[0]?.version).not.toBe(edsVersions['b']);
    expect(responses).toHaveLength(4);
    const second = env.discovery.findConnection(proxyId);
    expect(second).not.toBe(first);
    expect(second?.kind).toBe('delta');
    expect([...(second?.held.get(ENDPOINT_TYPE)?.names() ?? [])]).toEqual(['b']);
    expect(endpoints.nonce).not.toBe(eds.nonce);
  });

  test('raw: ACKs from the envelope alone, the versions held all the same', async () => {
    const { client, next, proxyId } = start({ raw: newRawDiscoveryCodec(protos) });
    const first = await next(0);
    expect(first.bytes).toBeGreaterThan(0);
    await waitFor(() => acked(env.discovery.findConnection(proxyId), CLUSTER_TYPE), { description: 'CDS ACKed' });
    expect([...client.versions(CLUSTER_TYPE).keys()].sort()).toEqual(['a', 'b']);
    client.subscribe(ENDPOINT_TYPE, ['b']);
    const eds = await next(1);
    expect(eds.type_url).toBe(ENDPOINT_TYPE);
    expect(eds.resources.map((resource) => resource.name)).toEqual(['b']);
  });
});
