import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { credentials, makeGenericClientConstructor, status, type Client } from '@grpc/grpc-js';
import type { AddressInfo } from 'node:net';
import { fastify, type FastifyInstance } from 'fastify';
import { waitFor } from '../testing/wait-for.js';
import { CSDS_SERVICE, loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import {
  histogramCount,
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
import { CLIENT_CONFIG_TYPE, CLUSTER_TYPE, DEBUG_SYNCZ_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE } from './envoy/type-urls.js';

let protos: EnvoyProtos;
let env: TestXds;
let client: AdsTestClient;
let app: FastifyInstance;
let pod = 0;
let baseUrl: string;

async function get(path: string): Promise<{ status: number; body: string; json: () => unknown }> {
  const response = await fetch(`${baseUrl}${path}`);
  const body = await response.text();
  return { status: response.status, body, json: () => JSON.parse(body) };
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  env = await startTestXds(protos, { auth: SYSTEM_CALLERS });
  client = newAdsTestClient(protos, env.port);
  app = fastify();
  env.xds.debugRoutes(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  client.close();
  await app.close();
  await env.close();
});

beforeEach(async () => {
  env.world.clusters = {
    a: [{ address: '10.0.0.1', port: 80 }],
    b: [{ address: '10.0.0.2', port: 80 }],
  };
  env.world.listeners = { 'a.default.svc.cluster.local:80': 'a' };
  env.world.brokenCluster = undefined;
  env.ready.value = true;
  await env.sync();
});

const streams: AdsTestStream[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.cancel();
  await waitFor(() => env.discovery.connections().length === 0, { description: 'streams of the test closed' });
});

function open(namespace = 'default'): { stream: AdsTestStream; node: object; proxyId: string } {
  const name = `app-${++pod}`;
  const stream = client.sotw();
  streams.push(stream);
  return { stream, node: nodeFor(name, namespace), proxyId: `${name}.${namespace}` };
}

function names(response: ResponseMessage): string[] {
  return response.resources.map((resource) =>
    String(
      protos.decodeAny(resource as { type_url: string; value: Buffer })['name'] ??
        protos.decodeAny(resource as { type_url: string; value: Buffer })['cluster_name'],
    ),
  );
}

/** Asks for syncz on the same stream: every response the stream owes comes before it. */
async function barrier(stream: AdsTestStream): Promise<ResponseMessage[]> {
  stream.send({ type_url: DEBUG_SYNCZ_TYPE });
  const before: ResponseMessage[] = [];
  for (;;) {
    const response = await stream.next();
    if (response.type_url === DEBUG_SYNCZ_TYPE) return before;
    before.push(response);
  }
}

async function syncz(proxyId: string): Promise<Record<string, { status: string; lastError?: string; sentNonce: string; ackedNonce: string }>> {
  const reply = await get('/debug/syncz');
  const entry = (reply.json() as Array<{ proxy: string; types: Array<{ type: string; status: string }> }>).find((p) => p.proxy === proxyId);
  return Object.fromEntries((entry?.types ?? []).map((t) => [t.type, t])) as never;
}

describe('state-of-the-world ADS', () => {
  test('the first request gets every resource with a version and a nonce', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const response = await stream.next();
    expect(response.type_url).toBe(CLUSTER_TYPE);
    expect(response.version_info).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\/\d+$/);
    expect(response.nonce.startsWith(`${response.version_info}/`)).toBe(true);
    expect(names(response)).toEqual(['a', 'b']);
    expect(protos.decodeAny(response.resources[0] as never)).toMatchObject({ name: 'a', type: 'EDS' });
  });

  test('an ACK is recorded and nothing is resent', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const response = await stream.next();
    stream.send({ type_url: CLUSTER_TYPE, version_info: response.version_info, response_nonce: response.nonce });
    expect(await barrier(stream)).toEqual([]);
    expect((await syncz(proxyId))['cds']).toMatchObject({ status: 'SYNCED', sentNonce: response.nonce, ackedNonce: response.nonce });
  });

  test('a NACK keeps the last good config: recorded, counted, visible in syncz, nothing resent', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const first = await stream.next();
    stream.send({ type_url: CLUSTER_TYPE, version_info: first.version_info, response_nonce: first.nonce });
    await barrier(stream);
    env.world.clusters['c'] = [];
    env.push();
    const second = await stream.next();
    expect(names(second)).toEqual(['a', 'b', 'c']);
    const rejectsBefore = await metricValue(env.metrics, 'pilot_total_xds_rejects', { type: 'cds' });
    stream.send({
      type_url: CLUSTER_TYPE,
      version_info: first.version_info,
      response_nonce: second.nonce,
      error_detail: { code: 3, message: 'cluster c: unsupported' },
    });
    expect(await barrier(stream)).toEqual([]);
    expect(await metricValue(env.metrics, 'pilot_total_xds_rejects', { type: 'cds' })).toBe(rejectsBefore + 1);
    expect(await metricValue(env.metrics, 'pilot_xds_cds_reject')).toBe(1);
    expect((await syncz(proxyId))['cds']).toMatchObject({ status: 'ERROR', lastError: 'cluster c: unsupported', ackedNonce: first.nonce });

    // The next push is ACKed: the error clears and the gauge goes back.
    env.push();
    const third = await stream.next();
    stream.send({ type_url: CLUSTER_TYPE, version_info: third.version_info, response_nonce: third.nonce });
    await barrier(stream);
    expect((await syncz(proxyId))['cds']?.status).toBe('SYNCED');
    expect(await metricValue(env.metrics, 'pilot_xds_cds_reject')).toBe(0);
  });

  test('a stale nonce is ignored and counted', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const response = await stream.next();
    const before = await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' });
    stream.send({ type_url: CLUSTER_TYPE, version_info: response.version_info, response_nonce: 'not-a-nonce-we-sent' });
    expect(await barrier(stream)).toEqual([]);
    expect(await metricValue(env.metrics, 'pilot_xds_expired_nonce', { type: 'cds' })).toBe(before + 1);
  });

  test('names added are answered alone, dropped ones silently; no names unsubscribes', async () => {
    const { stream, node } = open();
    env.world.clusters['c'] = [{ address: '10.0.0.3', port: 80 }];
    await env.sync();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names: ['a', 'b'] });
    const first = await stream.next();
    expect(names(first)).toEqual(['a', 'b']);
    stream.send({ type_url: ENDPOINT_TYPE, version_info: first.version_info, response_nonce: first.nonce, resource_names: ['a'] });
    expect(await barrier(stream)).toEqual([]);
    stream.send({ type_url: ENDPOINT_TYPE, version_info: first.version_info, response_nonce: first.nonce, resource_names: ['a', 'c'] });
    const added = await stream.next();
    expect(names(added)).toEqual(['c']);
    stream.send({ type_url: ENDPOINT_TYPE, version_info: added.version_info, response_nonce: added.nonce, resource_names: ['a', 'c'] });
    env.push();
    expect(names(await stream.next())).toEqual(['a', 'c']);
    expect(await barrier(stream)).toEqual([]);
  });

  test('an empty name list unsubscribes: later pushes skip the type', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: ENDPOINT_TYPE, resource_names: ['a'] });
    const first = await stream.next();
    stream.send({ type_url: ENDPOINT_TYPE, version_info: first.version_info, response_nonce: first.nonce, resource_names: [] });
    await barrier(stream);
    await env.sync();
    await waitFor(() => env.discovery.pendingPushes() === 0, { description: 'push taken by a worker' });
    expect(await barrier(stream)).toEqual([]);
  });

  test('a reconnect with an old nonce is answered in full', async () => {
    const first = open();
    first.stream.send({ node: first.node, type_url: CLUSTER_TYPE });
    const response = await first.stream.next();
    first.stream.cancel();
    const second = client.sotw();
    streams.push(second);
    second.send({ node: first.node, type_url: CLUSTER_TYPE, version_info: response.version_info, response_nonce: response.nonce });
    expect(names(await second.next())).toEqual(['a', 'b']);
    await waitFor(() => env.discovery.connections().filter((c) => c.proxy.id === first.proxyId).length === 1, { description: 'old connection gone' });
  });

  test('a push sends every watched type in order: CDS, EDS, LDS, RDS', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    stream.send({ type_url: ENDPOINT_TYPE, resource_names: ['a'] });
    stream.send({ type_url: LISTENER_TYPE });
    stream.send({ type_url: ROUTE_TYPE, resource_names: ['route/a.default.svc.cluster.local:80'] });
    const initial = [await stream.next(), await stream.next(), await stream.next(), await stream.next()];
    expect(initial.map((r) => r.type_url)).toEqual([CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE]);
    const convergedBefore = await histogramCount(env.metrics, 'pilot_proxy_convergence_time');
    env.push();
    const pushed = [await stream.next(), await stream.next(), await stream.next(), await stream.next()];
    expect(pushed.map((r) => r.type_url)).toEqual([CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE]);
    expect(new Set(pushed.map((r) => r.version_info)).size).toBe(1);
    expect(pushed[0]?.version_info).not.toBe(initial[0]?.version_info);
    await waitFor(async () => (await histogramCount(env.metrics, 'pilot_proxy_convergence_time')) > convergedBefore, { description: 'convergence recorded' });
    expect(await metricValue(env.metrics, 'pilot_push_triggers', { type: 'config' })).toBeGreaterThan(0);
  });

  test('an endpoint-only push sends EDS alone, for the changed service only', async () => {
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    stream.send({ type_url: ENDPOINT_TYPE, resource_names: ['a', 'b'] });
    stream.send({ type_url: LISTENER_TYPE });
    const initial = [await stream.next(), await stream.next(), await stream.next()];
    env.world.clusters['b'] = [{ address: '10.0.0.22', port: 8080 }];
    env.push({ full: false, configsUpdated: [serviceKey('b')], reason: 'endpoint' });
    const pushed = await stream.next();
    expect(pushed.type_url).toBe(ENDPOINT_TYPE);
    expect(pushed.version_info).toBe(initial[0]?.version_info);
    expect(names(pushed)).toEqual(['b']);
    expect(protos.decodeAny(pushed.resources[0] as never)).toMatchObject({
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '10.0.0.22', port_value: 8080 } } } }] }],
    });
    expect(await barrier(stream)).toEqual([]);
  });

  test('encoded resources are shared across proxies through the cache', async () => {
    const hitsBefore = await metricValue(env.metrics, 'xds_cache_reads', { type: 'hit' });
    const missesBefore = await metricValue(env.metrics, 'xds_cache_reads', { type: 'miss' });
    await env.sync();
    const one = open();
    one.stream.send({ node: one.node, type_url: CLUSTER_TYPE });
    await one.stream.next();
    const two = open();
    two.stream.send({ node: two.node, type_url: CLUSTER_TYPE });
    await two.stream.next();
    expect(await metricValue(env.metrics, 'xds_cache_reads', { type: 'miss' })).toBeGreaterThanOrEqual(missesBefore + 2);
    expect(await metricValue(env.metrics, 'xds_cache_reads', { type: 'hit' })).toBeGreaterThanOrEqual(hitsBefore + 2);
    expect(await metricValue(env.metrics, 'xds_cache_size')).toBeGreaterThanOrEqual(2);
  });

  test('a generator that throws is counted; the other resources are still served', async () => {
    env.world.brokenCluster = 'b';
    await env.sync();
    const before = await metricValue(env.metrics, 'pilot_total_xds_internal_errors');
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    expect(names(await stream.next())).toEqual(['a']);
    expect(await metricValue(env.metrics, 'pilot_total_xds_internal_errors')).toBe(before + 1);
  });

  test('a push context that cannot be built is counted; the previous one stays in effect', async () => {
    const before = await metricValue(env.metrics, 'pilot_xds_push_context_errors');
    env.world.failPushContext = true;
    env.world.clusters['c'] = [];
    try {
      env.push();
      await waitFor(async () => (await metricValue(env.metrics, 'pilot_xds_push_context_errors')) === before + 1, { description: 'error counted' });
    } finally {
      env.world.failPushContext = false;
    }
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    expect(names(await stream.next())).toEqual(['a', 'b']);
  });

  test('a new stream is refused with UNAVAILABLE until the model has synced', async () => {
    env.ready.value = false;
    const { stream, node } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const result = await stream.status;
    expect(result.code).toBe(status.UNAVAILABLE);
    expect(stream.buffered()).toBe(0);
  });

  test('a bad node id is refused with INVALID_ARGUMENT and a message', async () => {
    const { stream } = open();
    stream.send({ node: { id: 'sidecar~10.0.0.1~only-three' }, type_url: CLUSTER_TYPE });
    const result = await stream.status;
    expect(result.code).toBe(status.INVALID_ARGUMENT);
    expect(result.details).toMatch(/must have 4 parts/);
  });

  test('the syncz debug type answers one ClientConfig per proxy', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    const cds = await stream.next();
    stream.send({ type_url: CLUSTER_TYPE, version_info: cds.version_info, response_nonce: cds.nonce });
    stream.send({ type_url: DEBUG_SYNCZ_TYPE });
    const response = await stream.next();
    expect(response.type_url).toBe(DEBUG_SYNCZ_TYPE);
    const configs = response.resources.map((resource) => {
      expect(resource.type_url).toBe(CLIENT_CONFIG_TYPE);
      return protos.decodeAny(resource as never) as {
        node: { id: string };
        generic_xds_configs: Array<{ type_url: string; config_status: string; version_info: string }>;
      };
    });
    const mine = configs.find((config) => config.node.id === proxyId);
    expect(mine?.generic_xds_configs).toEqual([expect.objectContaining({ type_url: CLUSTER_TYPE, config_status: 'SYNCED', version_info: cds.version_info })]);
  });

  test('CSDS answers the same per-proxy status', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    await stream.next();
    const Csds = makeGenericClientConstructor(protos.serviceDefinition(CSDS_SERVICE), 'ClientStatusDiscoveryService');
    const csds = new Csds(`127.0.0.1:${env.port}`, credentials.createInsecure()) as unknown as Client & {
      FetchClientStatus(
        request: object,
        callback: (error: Error | null, response?: { config: Array<{ node: { id: string }; generic_xds_configs: Array<{ config_status: string }> }> }) => void,
      ): void;
    };
    try {
      const response = await new Promise<{ config: Array<{ node: { id: string }; generic_xds_configs: Array<{ config_status: string }> }> }>(
        (resolve, reject) => csds.FetchClientStatus({}, (error, reply) => (error || !reply ? reject(error) : resolve(reply))),
      );
      const mine = response.config.find((config) => config.node.id === proxyId);
      expect(mine?.generic_xds_configs.map((config) => config.config_status)).toEqual(['STALE']);
    } finally {
      csds.close();
    }
  });

  test('debug endpoints: adsz, push_status, config_dump without key material', async () => {
    const { stream, node, proxyId } = open();
    stream.send({ node, type_url: CLUSTER_TYPE });
    stream.send({ type_url: SECRET_TYPE, resource_names: ['default'] });
    await stream.next();
    await stream.next();
    const adsz = (await get('/debug/adsz')).json() as { clients: Array<{ proxy: string; stream: string; watches: Record<string, unknown> }> };
    expect(adsz.clients.find((c) => c.proxy === proxyId)).toMatchObject({ stream: 'sotw', watches: { cds: { wildcard: true }, sds: { names: ['default'] } } });

    env.push();
    await stream.next();
    await stream.next();
    const pushStatus = (await get('/debug/push_status')).json() as { version: string; full: boolean; reasons: Record<string, number> };
    expect(pushStatus).toMatchObject({ full: true, reasons: { config: 1 } });

    const dumpReply = await get(`/debug/config_dump?proxyID=${proxyId}`);
    expect(dumpReply.status).toBe(200);
    const text = dumpReply.body;
    expect(text).not.toMatch(/PRIVATE KEY/);
    const dump = dumpReply.json() as { configs: Array<Record<string, unknown>> };
    expect(dump.configs.map((c) => c['@type'])).toEqual([
      'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
      'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
      'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
      'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
      'type.googleapis.com/envoy.admin.v3.SecretsConfigDump',
    ]);
    const clusters = dump.configs[0]?.['dynamic_active_clusters'] as Array<{ cluster: { name: string } }>;
    expect(clusters.map((c) => c.cluster.name)).toEqual(['a', 'b']);
    const secrets = dump.configs[4]?.['dynamic_active_secrets'] as Array<{ name: string; secret: { tls_certificate: Record<string, unknown> } }>;
    expect(secrets[0]).toMatchObject({
      name: 'default',
      secret: { tls_certificate: { certificate_chain: { inline_string: 'cert of default' }, private_key: { inline_string: '[redacted]' } } },
    });

    expect((await get('/debug/config_dump')).status).toBe(400);
    expect((await get('/debug/config_dump?proxyID=nobody.nowhere')).status).toBe(404);
  });

  test('connected proxies are counted by version and forgotten on close', async () => {
    const { stream, node } = open();
    const before = await metricValue(env.metrics, 'pilot_xds', { version: '1.0.0' });
    stream.send({ node, type_url: CLUSTER_TYPE });
    await stream.next();
    expect(await metricValue(env.metrics, 'pilot_xds', { version: '1.0.0' })).toBe(before + 1);
    stream.cancel();
    await waitFor(async () => (await metricValue(env.metrics, 'pilot_xds', { version: '1.0.0' })) === before, { description: 'gauge back' });
  });
});
