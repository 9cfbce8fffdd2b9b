import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { selfSignedCertificate } from '../testing/openssl.js';
import { waitFor } from '../testing/wait-for.js';
import { ADS_SERVICE, loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import { AdsTestStream, metricValue, nodeFor, startTestXds, SYSTEM_CALLERS, type ResponseMessage, type TestXds } from './testing/test-support.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE } from './envoy/type-urls.js';

// Streams opened and closed by the hundred (a reconnect storm) leave nothing behind: the
// connection registry, the push queue and the per-version gauge return to zero, and the heap to
// its baseline, over TLS with authentication as proxies connect.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let protos: EnvoyProtos;
let env: TestXds;
let dir: string;
let caPem: string;

type AdsClient = Client & { StreamAggregatedResources(metadata: Metadata): ClientDuplexStream<object, ResponseMessage> };

beforeAll(async () => {
  protos = loadEnvoyProtos();
  dir = mkdtempSync(join(tmpdir(), 'churn-'));
  const serving = await selfSignedCertificate(dir, 'meshd', 'DNS:localhost,IP:127.0.0.1');
  caPem = readFileSync(serving.certFile, 'utf8');
  env = await startTestXds(protos, {
    auth: SYSTEM_CALLERS,
    secureGrpcAddr: '127.0.0.1:0',
    tls: { keyPem: readFileSync(serving.keyFile, 'utf8'), certPem: caPem },
  });
  await env.xds.secure?.waitForReady();
  env.world.clusters = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, [{ address: `10.0.${i}.1`, port: 80 }]]));
  await env.sync();
});

afterAll(async () => {
  await env?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `count` proxies, each on its own TLS channel, subscribe to CDS and EDS, then all go away. */
async function storm(round: number, count: number): Promise<void> {
  const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
  const clients: AdsClient[] = [];
  const streams: AdsTestStream[] = [];
  for (let i = 0; i < count; i++) {
    const client = new Ctor(`127.0.0.1:${env.xds.secure?.port() ?? 0}`, credentials.createSsl(Buffer.from(caPem)), {
      'grpc.ssl_target_name_override': 'localhost',
      'grpc.use_local_subchannel_pool': 1,
    }) as unknown as AdsClient;
    clients.push(client);
    const stream = new AdsTestStream(client.StreamAggregatedResources(new Metadata()) as never);
    stream.send({ node: nodeFor(`storm-${round}-${i}`, 'default'), type_url: CLUSTER_TYPE });
    stream.send({ node: nodeFor(`storm-${round}-${i}`, 'default'), type_url: ENDPOINT_TYPE, resource_names: ['c1', 'c2'] });
    streams.push(stream);
  }
  await Promise.all(streams.map((stream) => stream.next(20_000)));
  for (const stream of streams) stream.cancel();
  for (const client of clients) client.close();
  await waitFor(() => env.discovery.connections().length === 0, { timeoutMs: 20_000, description: 'every stream closed' });
}

const heapUsed = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

describe('a storm of streams opened and closed', () => {
  test('registry, queue and gauges return to zero; the heap to its baseline', async () => {
    // A first storm of the same size warms up what is built once (compiled code, TLS and gRPC internals).
    await storm(0, 200);
    const baseline = heapUsed();
    for (let round = 1; round <= 3; round++) await storm(round, 200);
    expect(env.discovery.connections()).toHaveLength(0);
    expect(env.discovery.pendingPushes()).toBe(0);
    expect(await metricValue(env.metrics, 'pilot_xds')).toBe(0);
    // 600 streams' worth of per-connection state (watches, nonces, sent resources) would be several MB.
    expect(heapUsed() - baseline).toBeLessThan(2 * 1024 * 1024);
  }, 60_000);
});
