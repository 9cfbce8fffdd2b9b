import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Metadata } from '@grpc/grpc-js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from './envoy/envoy-protos.js';
import { metricValue, newAdsTestClient, nodeFor, startTestXds, type AdsTestClient, type TestXds } from './testing/test-support.js';
import { SECRET_TYPE } from './envoy/type-urls.js';

let env: TestXds;
let client: AdsTestClient;

beforeAll(async () => {
  const protos = loadEnvoyProtos();
  env = await startTestXds(protos, { tuning: { sendTimeoutMs: 1000 } });
  // Far more than the HTTP/2 windows and socket buffers hold while the client reads nothing.
  env.world.secrets = { big: { cert: 'x'.repeat(16 * 1024 * 1024), key: 'k' } };
  await env.sync();
  client = newAdsTestClient(protos, env.port);
});

afterAll(async () => {
  client.close();
  await env.close();
});

describe('PILOT_XDS_SEND_TIMEOUT', () => {
  test('a send the proxy does not take in time is discarded, counted, and the stream ended', async () => {
    const stream = client.sotw(new Metadata());
    stream.call.pause();
    stream.send({ node: nodeFor('slow-1', 'default'), type_url: SECRET_TYPE, resource_names: ['big'] });
    await waitFor(() => env.discovery.connections().length === 1 && env.clock.pendingTimers() > 0, { description: 'a send waiting on the timeout' });
    expect(await metricValue(env.metrics, 'pilot_xds_write_timeout')).toBe(0);
    env.clock.advance(999);
    expect(env.discovery.connections()).toHaveLength(1);
    env.clock.advance(1);
    await waitFor(async () => (await metricValue(env.metrics, 'pilot_xds_write_timeout')) === 1, { description: 'timeout counted' });
    expect(env.discovery.connections()).toHaveLength(0);
    stream.cancel();
  });
});
