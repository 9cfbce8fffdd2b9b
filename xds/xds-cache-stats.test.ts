import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Metadata } from '@grpc/grpc-js';
import { loadEnvoyProtos } from './envoy/envoy-protos.js';
import { CLUSTER_TYPE } from './envoy/type-urls.js';
import { metricValue, newAdsTestClient, nodeFor, startTestXds, type AdsTestClient, type TestXds } from './testing/test-support.js';

// PILOT_XDS_CACHE_STATS off (its default): the cache still serves, but its reads, evictions and
// size are not recorded, as the reference gates them (with it on, ads-sotw.test.ts sees them move).
let env: TestXds;
let client: AdsTestClient;

beforeAll(async () => {
  const protos = loadEnvoyProtos();
  env = await startTestXds(protos, { tuning: { cacheStats: false } });
  env.world.clusters = { a: [{ address: '10.0.0.1', port: 80 }], b: [{ address: '10.0.0.2', port: 80 }] };
  await env.sync();
  client = newAdsTestClient(protos, env.port);
});

afterAll(async () => {
  client.close();
  await env.close();
});

describe('PILOT_XDS_CACHE_STATS=false', () => {
  test('two proxies share cached clusters; xds_cache_reads, xds_cache_size and xds_cache_evictions stay at zero', async () => {
    for (const name of ['app-1', 'app-2']) {
      const stream = client.sotw(new Metadata());
      stream.send({ node: nodeFor(name, 'default'), type_url: CLUSTER_TYPE });
      expect((await stream.next()).resources.length).toBeGreaterThan(0);
      stream.cancel();
    }
    expect(await metricValue(env.metrics, 'xds_cache_reads', { type: 'hit' })).toBe(0);
    expect(await metricValue(env.metrics, 'xds_cache_reads', { type: 'miss' })).toBe(0);
    expect(await metricValue(env.metrics, 'xds_cache_size')).toBe(0);
    expect(await metricValue(env.metrics, 'xds_cache_evictions')).toBe(0);
    expect(await metricValue(env.metrics, 'pilot_xds_pushes', { type: 'cds' })).toBeGreaterThanOrEqual(2);
  });
});
