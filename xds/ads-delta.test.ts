import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import {
  metricValue,
  newAdsTestClient,
  nodeFor,
  serviceKey,
  startTestXds,
  SYSTEM_CALLERS,
  type AdsTestClient,
  type AdsTestStream,
  type ResponseMessage,
  type TestXds,
} from './testing/test-support.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, SECRET_TYPE } from './envoy/type-urls.js';

let protos: EnvoyProtos;
let env: TestXds;
let client: AdsTestClient;
let pod = 0;
let barriers = 0;

beforeAll(async () => {
  protos = loadEnvoyProtos();
  env = await startTestXds(protos, { auth: SYSTEM_CALLERS });
  client = newAdsTestClient(protos, env.port);
});

afterAll(async () => {
  client.close();
  await env.close();
});

beforeEach(async () => {
  env.world.clusters = {
    a: [{ address: '10.0.0.1', port: 80 }],
    b: [{ address: '10.0.0.2', port: 80 }],
  };
  await env.sync();
});

const streams: AdsTestStream[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.cancel();
  await waitFor(() => env.discovery.connections().length === 0, { description: 'streams of the test closed' });
});

function open(name = `app-${++pod}`): { stream: AdsTestStream; node: object; proxyId: string } {
  const stream = client.delta();
  streams.push(stream);
  return { stream, node: nodeFor(name, 'default'), proxyId: `${name}.default` };
}

function resourceNames(response: ResponseMessage): string[] {
  return response.resources.map((resource) => resource.name ?? '').sort();
}

/** Subscribes a new secret: every response the stream owes comes before the secret's. */
async function barrier(stream: AdsTestStream): Promise<ResponseMessage[]> {
  const name = `barrier-${++barriers}`;
  stream.send({ type_url: SECRET_TYPE, resource_names_subscribe: [name] });
  const before: ResponseMessage[] = [];
  for (;;) {
    const response = await stream.next();
    if (response.type_url === SECRET_TYPE && resourceNames(response).includes(name)) return before;
    before.push(response);
  }
}

async function ack(stream: AdsTestStream, response: ResponseMessage): Promise<void> {
  stream.send({ type_url: response.type_url, response_nonce: response.nonce });
  expect(await barrier(stream)).toEqual([]);
}

describe('delta ADS', () => {
  test('a wildcard request gets every resource, each with a name and a version', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const response = await stream.next();
    expect(response.type_url).toBe(CLUSTER_TYPE);
    expect(response.system_version_info).toMatch(/Z\/\d+$/);
    expect(response.nonce).not.toBe('');
    expect(resourceNames(response)).toEqual(['a', 'b']);
    for (const resource of response.resources) {
      expect(resource.version).toMatch(/^[\w-]{16}$/);
      expect(protos.decodeAny(resource.resource as never)).toMatchObject({ name: resource.name, type: 'EDS' });
    }
    expect(response.removed_resources).toEqual([]);
  });

  test('an ACK is recorded and nothing is resent; a push sends only what changed', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const first = await stream.next();
    await ack(stream, first);
    env.world.clusters['c'] = [];
    env.push();
    const pushed = await stream.next();
    expect(resourceNames(pushed)).toEqual(['c']);
    expect(pushed.removed_resources).toEqual([]);
  });

  test('a resource the generator stops returning is removed', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    await ack(stream, await stream.next());
    delete env.world.clusters['b'];
    env.push();
    const pushed = await stream.next();
    expect(pushed.resources).toEqual([]);
    expect(pushed.removed_resources).toEqual(['b']);
  });

  test('unsubscribing needs no response; later pushes leave the name out', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a', 'b'] });
    const first = await stream.next();
    expect(resourceNames(first)).toEqual(['a', 'b']);
    await ack(stream, first);
    stream.send({ type_url: ENDPOINT_TYPE, resource_names_unsubscribe: ['b'] });
    expect(await barrier(stream)).toEqual([]);
    expect(env.discovery.findConnection(proxyId)?.watches.get(ENDPOINT_TYPE)?.names).toEqual(['a']);
    env.world.clusters['a'] = [{ address: '10.0.1.1', port: 81 }];
    env.world.clusters['b'] = [{ address: '10.0.1.2', port: 81 }];
    env.push({ full: false, configsUpdated: [serviceKey('a'), serviceKey('b')], reason: 'endpoint' });
    const pushed = await stream.next();
    expect(resourceNames(pushed)).toEqual(['a']);
    expect(pushed.removed_resources).toEqual([]);
  });

  test('subscribing to a name that does not exist answers it as removed', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a'] });
    await ack(stream, await stream.next());
    stream.send({ type_url: ENDPOINT_TYPE, resource_names_subscribe: ['nope'] });
    const response = await stream.next();
    expect(response.resources).toEqual([]);
    expect(response.removed_resources).toEqual(['nope']);
  });

  test('a first request naming names that do not exist, among others and in any order, answers them as removed', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names_subscribe: ['nope', 'b', 'a', 'also-nope'] });
    const response = await stream.next();
    expect(resourceNames(response)).toEqual(['a', 'b']);
    expect(response.removed_resources).toEqual(['also-nope', 'nope']);
    await ack(stream, response);
  });

  test('a reconnect with initial versions gets only what changed and the removals', async () => {
    const first = open();
    first.stream.send({ node: first.node, type_url: CLUSTER_TYPE });
    const initial = await first.stream.next();
    const versions = Object.fromEntries(initial.resources.map((r) => [r.name ?? '', r.version ?? '']));
    first.stream.cancel();
    env.world.clusters['b'] = [{ address: '10.0.0.20', port: 80 }];
    await env.sync();
    const second = open();
    second.stream.send({
      node: first.node,
      type_url: CLUSTER_TYPE,
      initial_resource_versions: { a: versions['a'], b: 'an-old-version', gone: 'v0' },
    });
    const response = await second.stream.next();
    expect(resourceNames(response)).toEqual(['b']);
    expect(response.removed_resources).toEqual(['gone']);
  });

  test('a NACK is recorded and counted, and nothing is resent', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a'] });
    const response = await stream.next();
    const before = await metricValue(env.metrics, 'pilot_total_xds_rejects', { type: 'eds' });
    stream.send({ type_url: ENDPOINT_TYPE, response_nonce: response.nonce, error_detail: { code: 3, message: 'endpoint a: bad' } });
    expect(await barrier(stream)).toEqual([]);
    expect(await metricValue(env.metrics, 'pilot_total_xds_rejects', { type: 'eds' })).toBe(before + 1);
    expect(await metricValue(env.metrics, 'pilot_xds_eds_reject')).toBe(1);
    expect(env.discovery.findConnection(proxyId)?.watches.get(ENDPOINT_TYPE)).toMatchObject({ lastError: 'endpoint a: bad' });
  });

  test('a stale nonce is ignored and counted', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    await stream.next();
    const before = await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' });
    stream.send({ type_url: CLUSTER_TYPE, response_nonce: 'stale' });
    expect(await barrier(stream)).toEqual([]);
    expect(await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' })).toBe(before + 1);
  });
});
