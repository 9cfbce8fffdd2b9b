import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../controllers/runtime/index.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { jsonToStruct } from '../xds/envoy/struct-json.js';
import { serviceKey, startTestXds, type TestXds } from '../xds/testing/test-support.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { newConfigState, type ConfigState } from './config-state.js';
import { newXdsSubscriber, type XdsSubscriber } from './xds-subscriber.js';

let env: TestXds;
let state: ConfigState;
let subscriber: XdsSubscriber;

beforeAll(async () => {
  const protos = loadEnvoyProtos();
  env = await startTestXds(protos);
  env.world.clusters = { 'outbound|80||a.ns.svc.cluster.local': [{ address: '127.0.0.1', port: 9 }] };
  await env.sync();
  state = newConfigState();
  subscriber = newXdsSubscriber({
    protos,
    target: `127.0.0.1:${env.port}`,
    credentials: credentials.createInsecure(),
    node: { id: 'sidecar~127.0.0.1~dp-1.ns~ns.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'ns' }), locality: { region: 'r' } },
    state,
    log: newNopLogger('xds'),
  });
  subscriber.start();
});

afterAll(async () => {
  subscriber?.close();
  await env?.close();
});

const connection = () => env.discovery.connections().find((con) => con.proxy.id === 'dp-1.ns');

describe('the data plane xDS subscriber against our ADS server', () => {
  test('subscribes as Envoy does: CDS and LDS, then EDS by the clusters\' names; every type ACKed', async () => {
    await waitFor(() => subscriber.isSynced() && state.current().resources.endpoints.size === 1, { description: 'clusters, endpoints and listeners accepted' });
    const con = connection();
    expect(con?.watches.get(ENDPOINT_TYPE)?.names).toEqual(['outbound|80||a.ns.svc.cluster.local']);
    await waitFor(() => [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE].every((type) => {
      const watch = con?.watches.get(type);
      return watch !== undefined && watch.nonceSent !== '' && watch.nonceAcked === watch.nonceSent;
    }), { description: 'all ACKed' });
  });

  test('a listener the data plane cannot implement is NACKed with the field named; the last good config stays', async () => {
    env.world.listeners = { 'a.ns.svc.cluster.local:80': 'outbound|80||a.ns.svc.cluster.local' };
    env.push();
    await waitFor(() => (connection()?.watches.get(LISTENER_TYPE)?.lastError ?? '') !== '', { description: 'NACK recorded by the server' });
    expect(connection()?.watches.get(LISTENER_TYPE)?.lastError).toContain('api_listener');
    expect(state.rejections().get(LISTENER_TYPE)).toContain('Listener a.ns.svc.cluster.local:80: api_listener');
    expect(state.current().resources.listeners).toEqual([]);
    expect(state.current().resources.clusters.size).toBe(1);
  });

  test('an endpoint change reaches the data plane over EDS', async () => {
    env.world.clusters = { 'outbound|80||a.ns.svc.cluster.local': [{ address: '127.0.0.2', port: 10 }] };
    env.push({ full: false, configsUpdated: [serviceKey('outbound|80||a.ns.svc.cluster.local')], reason: 'endpoint' });
    await waitFor(() => JSON.stringify(state.current().resources.endpoints.get('outbound|80||a.ns.svc.cluster.local') ?? {}).includes('127.0.0.2'), { description: 'new endpoint' });
  });
});
