import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { CLUSTER_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../xds/envoy/type-urls.js';
import { newConfigState, type ConfigState } from './config-state.js';
import { newXdsSubscriber, type XdsSubscriber } from './xds-subscriber.js';
import { startScriptedAdsServer, type ScriptedAdsServer } from './testing/scripted-ads-server.js';

// A state-of-the-world ADS server and the data plane's subscriber: a listener and its route leave
// in one push, and the route's response, sent before the server read the unsubscription, comes
// after the listeners. As Envoy, the data plane keeps only the routes it still asks for.
type Request = { type_url: string; response_nonce: string; resource_names: string[] };

const protos = loadEnvoyProtos();
let ads: ScriptedAdsServer<Request>;
let requests: Request[];
let state: ConfigState;
let subscriber: XdsSubscriber;
let nonces = 0;

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const listener = (port: number) => ({
  name: `0.0.0.0_${port}`,
  address: { socket_address: { address: '0.0.0.0', port_value: port } },
  bind_to_port: { value: false },
  filter_chains: [
    {
      filters: [
        {
          name: 'envoy.filters.network.http_connection_manager',
          typed_config: { '@type': HCM, stat_prefix: 'outbound', rds: { route_config_name: String(port), config_source: { ads: {} } }, http_filters: [ROUTER] },
        },
      ],
    },
  ],
});

function respond(typeUrl: string, messages: object[]): Promise<Request> {
  const nonce = `n${++nonces}`;
  return ads.respond({ version_info: nonce, type_url: typeUrl, nonce, resources: messages.map((message) => protos.encodeAny(typeUrl, message)) });
}

beforeAll(async () => {
  ads = await startScriptedAdsServer<Request>(protos, 'StreamAggregatedResources');
  requests = ads.requests;
  state = newConfigState();
  subscriber = newXdsSubscriber({
    protos,
    target: `127.0.0.1:${ads.port}`,
    credentials: credentials.createInsecure(),
    node: { id: 'sidecar~127.0.0.1~dp.ns~ns.svc.cluster.local' },
    state,
    log: newNopLogger('xds'),
  });
  subscriber.start();
  await waitFor(() => requests.length >= 2, { description: 'CDS and LDS subscribed' });
});

afterAll(() => {
  subscriber?.close();
  ads?.close();
});

test('a route unsubscribed with its listener does not come back with a response the server sent before it knew', async () => {
  expect((await respond(CLUSTER_TYPE, [])).response_nonce).toBe('n1');
  await respond(LISTENER_TYPE, [listener(80), listener(8000)]);
  await waitFor(() => requests.find((request) => request.type_url === ROUTE_TYPE && request.resource_names.length === 2), {
    description: 'both routes subscribed',
  });
  await respond(ROUTE_TYPE, [{ name: '80' }, { name: '8000' }]);
  expect([...state.current().resources.routes.keys()].sort()).toEqual(['80', '8000']);

  const seen = requests.length;
  await respond(LISTENER_TYPE, [listener(8000)]);
  await waitFor(() => requests.slice(seen).find((request) => request.type_url === ROUTE_TYPE && request.resource_names.join() === '8000'), {
    description: 'route 80 unsubscribed',
  });
  expect([...state.current().resources.routes.keys()]).toEqual(['8000']);
  // The push that removed the listener had also answered the old subscription.
  await respond(ROUTE_TYPE, [{ name: '80' }, { name: '8000', virtual_hosts: [] }]);
  expect([...state.current().resources.routes.keys()]).toEqual(['8000']);
});
