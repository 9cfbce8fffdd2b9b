import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { newConfigState, type ConfigState } from './config-state.js';
import { newXdsSubscriber, type XdsSubscriber } from './xds-subscriber.js';
import { startScriptedAdsServer, type ScriptedAdsServer } from './testing/scripted-ads-server.js';

// A delta ADS server that says what the test tells it (a broken or hostile control plane), and
// the data plane's subscriber in delta mode: whatever comes, the last good config keeps serving.
type Request = { type_url: string; response_nonce: string; resource_names_subscribe: string[]; error_detail: { message: string } | null };

const protos = loadEnvoyProtos();
let ads: ScriptedAdsServer<Request>;
let requests: Request[];
let state: ConfigState;
let subscriber: XdsSubscriber;
let nonces = 0;

const cluster = (name: string): object => ({
  name,
  type: 'EDS',
  eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
  connect_timeout: { seconds: 1 },
});
const resource = (name: string, typeUrl: string, message: object, version = 'v1') => ({ name, version, resource: protos.encodeAny(typeUrl, message) });

/** Sends a response; resolves with the request answering its nonce (the ACK or NACK). */
async function respond(typeUrl: string, resources: object[], removed: string[] = [], nonce = `n${++nonces}`): Promise<Request> {
  return ads.respond({ system_version_info: nonce, type_url: typeUrl, nonce, resources, removed_resources: removed });
}

beforeAll(async () => {
  ads = await startScriptedAdsServer<Request>(protos, 'DeltaAggregatedResources');
  requests = ads.requests;
  state = newConfigState();
  subscriber = newXdsSubscriber({
    protos,
    target: `127.0.0.1:${ads.port}`,
    credentials: credentials.createInsecure(),
    node: { id: 'sidecar~127.0.0.1~dp.ns~ns.svc.cluster.local' },
    state,
    log: newNopLogger('xds'),
    delta: true,
  });
  subscriber.start();
  await waitFor(() => requests.length >= 2, { description: 'CDS and LDS subscribed' });
  expect(requests.map((request) => [request.type_url, request.resource_names_subscribe])).toEqual([
    [CLUSTER_TYPE, []],
    [LISTENER_TYPE, []],
  ]);
  expect((await respond(CLUSTER_TYPE, [resource('a', CLUSTER_TYPE, cluster('a'))])).error_detail).toBeNull();
  expect((await respond(LISTENER_TYPE, [])).error_detail).toBeNull();
  await waitFor(() => requests.find((request) => request.type_url === ENDPOINT_TYPE), { description: 'EDS subscribed' });
  const endpoints = {
    cluster_name: 'a',
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9 } } } }] }],
  };
  expect((await respond(ENDPOINT_TYPE, [resource('a', ENDPOINT_TYPE, endpoints)])).error_detail).toBeNull();
  expect(subscriber.isSynced()).toBe(true);
});

afterAll(() => {
  subscriber?.close();
  ads?.close();
});

/** The config that serves: cluster a with its endpoint, nothing else. */
function expectLastGood(): void {
  expect([...state.current().resources.clusters.keys()]).toEqual(['a']);
  expect(JSON.stringify(state.current().resources.endpoints.get('a'))).toContain('127.0.0.1');
}

describe('the delta subscriber against a control plane sending bad input', () => {
  test.each([
    [
      'a resource whose bytes do not decode',
      () => [{ name: 'c', version: 'v1', resource: { type_url: CLUSTER_TYPE, value: Buffer.from([0x0a, 0xff]) } }],
      /index out of range/,
    ],
    [
      'a resource of another type',
      () => [resource('c', CLUSTER_TYPE, cluster('c')), resource('l', LISTENER_TYPE, { name: 'l' })],
      /resource l is a .*Listener, not a .*Cluster/,
    ],
    ['a resource without a body', () => [{ name: 'c', version: 'v1' }], /resource c has no body/],
    [
      'a message naming another resource than the one it travels under',
      () => [resource('c', CLUSTER_TYPE, cluster('d'))],
      /resource c: the message inside names another resource/,
    ],
    ['the same name twice', () => [resource('c', CLUSTER_TYPE, cluster('c')), resource('c', CLUSTER_TYPE, cluster('c'), 'v2')], /appears twice/],
  ])('%s: NACKed with the reason, and the whole response is left out', async (_name, resources, reason) => {
    const before = state.current();
    const answer = await respond(CLUSTER_TYPE, resources());
    expect(answer.error_detail?.message).toMatch(reason);
    expect(state.current()).toBe(before);
    expect(state.rejections().get(CLUSTER_TYPE)).toMatch(reason);
    expectLastGood();
  });

  test('a removal of a name never sent is ACKed and changes nothing', async () => {
    const before = state.current();
    expect((await respond(CLUSTER_TYPE, [], ['nope'])).error_detail).toBeNull();
    // Nothing to compile again: the same decisions serve.
    expect(state.current().decisions).toBe(before.decisions);
    expect((await respond(ENDPOINT_TYPE, [], ['nope'])).error_detail).toBeNull();
    expect(state.rejections().size).toBe(0);
    expectLastGood();
  });

  test('a stale nonce (a response replayed) is answered with its own nonce and changes nothing', async () => {
    const answer = await respond(CLUSTER_TYPE, [resource('a', CLUSTER_TYPE, cluster('a'))], [], 'n1');
    expect(answer).toMatchObject({ type_url: CLUSTER_TYPE, response_nonce: 'n1', error_detail: null });
    expectLastGood();
  });

  test('after all that, a good update is still taken', async () => {
    expect((await respond(CLUSTER_TYPE, [resource('b', CLUSTER_TYPE, cluster('b'))], [])).error_detail).toBeNull();
    expect([...state.current().resources.clusters.keys()].sort()).toEqual(['a', 'b']);
    await waitFor(() => requests.find((request) => request.type_url === ENDPOINT_TYPE && request.resource_names_subscribe.includes('b')), {
      description: 'b’s endpoints subscribed',
    });
  });

  test('endpoints of a cluster just removed, in a response sent before the server saw the unsubscription, stay out', async () => {
    const endpoints = (name: string) => ({
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9 } } } }] }],
    });
    expect((await respond(ENDPOINT_TYPE, [resource('b', ENDPOINT_TYPE, endpoints('b'))])).error_detail).toBeNull();
    expect(state.current().resources.endpoints.has('b')).toBe(true);
    const seen = requests.length;
    expect((await respond(CLUSTER_TYPE, [], ['b'])).error_detail).toBeNull();
    await waitFor(() => requests.slice(seen).find((request) => request.type_url === ENDPOINT_TYPE), { description: 'b’s endpoints unsubscribed' });
    expect(state.current().resources.endpoints.has('b')).toBe(false);
    // The server's push had sent b's endpoints before it read the unsubscription.
    expect(
      (await respond(ENDPOINT_TYPE, [resource('b', ENDPOINT_TYPE, endpoints('b'), 'v2'), resource('a', ENDPOINT_TYPE, endpoints('a'), 'v2')])).error_detail,
    ).toBeNull();
    expect([...state.current().resources.endpoints.keys()]).toEqual(['a']);
  });
});
