import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  type Client,
  type ServiceError,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from './envoy/envoy-protos.js';
import { serviceKey, startTestXds, type TestXds } from './testing/test-support.js';
import { ECHO_SERVICE as ECHO } from '../testing/echo-service.js';

const TARGET = 'echo.default.svc.cluster.local:7070';
const CLUSTER = 'outbound|7070||echo.default.svc.cluster.local';

async function startEcho(id: string): Promise<{ port: number; server: Server }> {
  const server = new Server();
  server.addService(ECHO, {
    Echo: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => callback(null, Buffer.concat([Buffer.from(`${id}:`), call.request])),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { port, server };
}

let env: TestXds;
let echoA: { port: number; server: Server };
let echoB: { port: number; server: Server };
let client: Client & { Echo: (request: Buffer, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Buffer) => void) => void };

function echo(text: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.Echo(Buffer.from(text), { deadline: new Date(Date.now() + 3000) }, (error, response) => (error ? reject(error) : resolve(String(response)))),
  );
}

beforeAll(async () => {
  const protos = loadEnvoyProtos();
  [env, echoA, echoB] = await Promise.all([startTestXds(protos), startEcho('a'), startEcho('b')]);
  env.world.clusters = { [CLUSTER]: [{ address: '127.0.0.1', port: echoA.port }] };
  env.world.listeners = { [TARGET]: CLUSTER };
  await env.sync();
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  const bootstrap = {
    xds_servers: [{ server_uri: `127.0.0.1:${env.port}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: {
      id: 'sidecar~127.0.0.1~echo-client-1.default~default.svc.cluster.local',
      locality: { region: 'region-1', zone: 'zone-1' },
      metadata: { GENERATOR: 'grpc', NAMESPACE: 'default', MESH_VERSION: '1.0.0' },
    },
  };
  const Echo = makeGenericClientConstructor(ECHO, 'Echo');
  client = new Echo(`xds:///${TARGET}`, credentials.createInsecure(), {
    'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap),
  }) as unknown as typeof client;
});

afterAll(async () => {
  client?.close();
  await env?.close();
  echoA?.server.forceShutdown();
  echoB?.server.forceShutdown();
});

describe('@grpc/grpc-js-xds against our ADS server', () => {
  test('resolves xds:/// through LDS, RDS, CDS and EDS and makes a real RPC', async () => {
    expect(await echo('hello')).toBe('a:hello');
    const con = env.discovery.connections().find((c) => c.proxy.id === 'echo-client-1.default');
    expect(con?.kind).toBe('sotw');
    expect(con?.proxy.metadata.generator).toBe('grpc');
    // Every type the client watches was ACKed.
    await waitFor(() => con && [...con.watches.values()].every((w) => w.nonceSent !== '' && w.nonceAcked === w.nonceSent), { description: 'all types ACKed' });
    expect([...(con?.watches.keys() ?? [])].sort()).toEqual([
      'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
      'type.googleapis.com/envoy.config.listener.v3.Listener',
      'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
    ]);
  });

  test('follows an endpoint change pushed over EDS', async () => {
    env.world.clusters = { [CLUSTER]: [{ address: '127.0.0.1', port: echoB.port }] };
    env.push({ full: false, configsUpdated: [serviceKey(CLUSTER)], reason: 'endpoint' });
    await waitFor(async () => (await echo('again')) === 'b:again', { timeoutMs: 4000, description: 'RPCs reach the new backend' });
  });
});
