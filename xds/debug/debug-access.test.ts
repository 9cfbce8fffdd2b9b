import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fastify, type FastifyInstance } from 'fastify';
import { waitFor } from '../../testing/wait-for.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../envoy/envoy-protos.js';
import { newAdsTestClient, nodeFor, startTestXds, type AdsTestClient, type TestXds } from '../testing/test-support.js';
import { CLUSTER_TYPE } from '../envoy/type-urls.js';
import { testTokenAuthenticator } from '../testing/test-authenticators.js';

// The daemon's HTTP debug endpoints for callers off the machine: authenticated as xDS streams
// are, the system namespace reads everything, a workload its own namespace's config dumps. Here
// only 127.0.0.1 counts as the daemon's machine, so a caller from 127.0.0.2 plays a remote one.
let protos: EnvoyProtos;
let env: TestXds;
let client: AdsTestClient;
let app: FastifyInstance;
let safeEnv: TestXds;
let safeApp: FastifyInstance;

const REMOTE = '127.0.0.2';
const LOCAL = '127.0.0.1';

/** A GET over a real socket from `from` to the app's port. */
function get(target: FastifyInstance, url: string, token?: string, from = REMOTE): Promise<{ statusCode: number; body: string }> {
  const { port } = target.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: LOCAL, port, path: url, localAddress: from, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  const auth = { authenticators: [testTokenAuthenticator], xdsAuth: true, xdsAuthPlaintext: false, identityCheck: false };
  const isLocalDebugCaller = (address: string | undefined): boolean => address === LOCAL || address === `::ffff:${LOCAL}`;
  env = await startTestXds(protos, { auth, unsafeAdminEndpoints: true, isLocalDebugCaller });
  safeEnv = await startTestXds(protos, { auth, isLocalDebugCaller });
  env.world.clusters = { a: [{ address: '10.0.0.1', port: 80 }] };
  await env.sync();
  client = newAdsTestClient(protos, env.port);
  app = fastify();
  env.xds.debugRoutes(app);
  app.get('/debug/configz', async () => ['every policy']);
  safeApp = fastify();
  safeEnv.xds.debugRoutes(safeApp);
  await Promise.all([app.listen({ host: LOCAL, port: 0 }), safeApp.listen({ host: LOCAL, port: 0 })]);
  const stream = client.sotw();
  stream.send({ node: nodeFor('app-1', 'default'), type_url: CLUSTER_TYPE });
  await stream.next();
});

afterAll(async () => {
  client.close();
  await Promise.all([app.close(), safeApp.close()]);
  await Promise.all([env.close(), safeEnv.close()]);
});

describe('debug endpoints over HTTP', () => {
  test('a caller on the loopback interface reads every view without a credential', async () => {
    expect((await get(app, '/debug/syncz', undefined, LOCAL)).statusCode).toBe(200);
    expect((await get(app, '/debug/configz', undefined, LOCAL)).statusCode).toBe(200);
  });

  test('another caller without a credential, or with a bad one, gets 401 on every view', async () => {
    for (const url of ['/debug/syncz', '/debug/config_dump?proxyID=app-1.default', '/debug/configz', '/debug/adsz']) {
      expect({ url, status: (await get(app, url)).statusCode }).toEqual({ url, status: 401 });
    }
    expect((await get(app, '/debug/syncz', 'garbage')).statusCode).toBe(401);
  });

  test('a workload reads the config dump of its namespace only; another namespace and an absent proxy answer alike; syncz and the rest are 403', async () => {
    const own = await get(app, '/debug/config_dump?proxyID=app-1.default', 'token:default:app');
    expect(own.statusCode).toBe(200);
    expect(own.body).toContain('"name":"a"');
    const foreign = await get(app, '/debug/config_dump?proxyID=app-1.default', 'token:other:app');
    const absent = await get(app, '/debug/config_dump?proxyID=nobody.default', 'token:other:app');
    expect({ status: foreign.statusCode, body: foreign.body }).toEqual({ status: absent.statusCode, body: absent.body });
    expect(foreign.statusCode).toBe(403);
    expect((await get(app, '/debug/config_dump?proxyID=nobody.default', 'token:default:app')).statusCode).toBe(403);
    for (const url of ['/debug/syncz', '/debug/adsz', '/debug/push_status', '/debug/configz', '/debug/force_disconnect?proxyID=app-1.default']) {
      expect({ url, status: (await get(app, url, 'token:default:app')).statusCode }).toEqual({ url, status: 403 });
    }
  });

  test('the system namespace reads everything', async () => {
    for (const url of ['/debug/syncz', '/debug/adsz', '/debug/configz', '/debug/config_dump?proxyID=app-1.default']) {
      expect({ url, status: (await get(app, url, 'token:mesh-system:meshctl')).statusCode }).toEqual({ url, status: 200 });
    }
    expect((await get(app, '/debug/config_dump?proxyID=nobody.default', 'token:mesh-system:meshctl')).statusCode).toBe(404);
  });

  test('force_disconnect exists only with UNSAFE_ENABLE_ADMIN_ENDPOINTS, and ends the proxy stream so that it reconnects', async () => {
    expect((await get(safeApp, '/debug/force_disconnect?proxyID=app-1.default', undefined, LOCAL)).statusCode).toBe(404);
    const victim = client.sotw();
    victim.send({ node: nodeFor('victim-1', 'default'), type_url: CLUSTER_TYPE });
    await victim.next();
    const answer = await get(app, '/debug/force_disconnect?proxyID=victim-1.default', 'token:mesh-system:meshctl');
    expect(answer.statusCode).toBe(200);
    expect((await victim.status).code).toBe(status.UNAVAILABLE);
    await waitFor(() => !env.discovery.connections().some((con) => con.proxy.id === 'victim-1.default'), { description: 'the stream closed' });
  });
});
