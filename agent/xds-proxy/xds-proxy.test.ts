import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, experimental, makeGenericClientConstructor, Metadata, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger, newRealClock } from '../../runtime/index.js';
import { certificateAuthority, selfSignedCertificate } from '../../testing/openssl.js';
import { newAgentTrustBundle } from '../secrets/trust-bundle.js';
import { waitFor } from '../../testing/wait-for.js';
import { ADS_SERVICE, loadEnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { AdsTestStream, nodeFor, startTestXds, type ResponseMessage, type TestXds } from '../../xds/testing/test-support.js';
import { CLUSTER_TYPE } from '../../xds/envoy/type-urls.js';
import { newXdsProxy, type XdsProxy } from './xds-proxy.js';

const protos = loadEnvoyProtos();
let dir: string;
let upstream: TestXds;
let proxy: XdsProxy;
let client: Client & { StreamAggregatedResources(m: Metadata): ClientDuplexStream<object, ResponseMessage> };
const tokens: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xds-proxy-'));
  upstream = await startTestXds(protos);
  upstream.world.clusters = { 'outbound|80||a.ns.svc.cluster.local': [{ address: '127.0.0.1', port: 9 }] };
  await upstream.sync();
  proxy = newXdsProxy({
    listen: `unix:${join(dir, 'XDS')}`,
    upstream: `127.0.0.1:${upstream.port}`,
    credentials: credentials.createInsecure(),
    metadata: async () => {
      const metadata = new Metadata();
      tokens.push('token');
      metadata.set('authorization', 'Bearer token');
      return metadata;
    },
    log: newNopLogger('ads'),
  });
  await proxy.start();
  const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
  client = new Ctor(`unix:${join(dir, 'XDS')}`, credentials.createInsecure()) as unknown as typeof client;
});

afterAll(async () => {
  client?.close();
  await proxy?.stop();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the agent xDS proxy', () => {
  test('relays a stream to the daemon with the token and the answers back', async () => {
    const stream = new AdsTestStream(client.StreamAggregatedResources(new Metadata()) as never);
    stream.send({ node: nodeFor('app-1', 'ns'), type_url: CLUSTER_TYPE, resource_names: [] });
    const response = await stream.next(5000);
    expect(response.type_url).toBe(CLUSTER_TYPE);
    expect(response.resources).toHaveLength(1);
    expect(tokens.length).toBeGreaterThan(0);
    stream.cancel();
  });

  test('a push flood against a proxy that stops reading neither deadlocks nor loses the stream', async () => {
    const call = client.StreamAggregatedResources(new Metadata());
    const received: ResponseMessage[] = [];
    call.on('data', (response: ResponseMessage) => {
      received.push(response);
      call.write({ type_url: response.type_url, version_info: response.version_info, response_nonce: response.nonce, resource_names: [] });
    });
    call.on('error', () => undefined);
    call.write({ node: nodeFor('app-3', 'ns'), type_url: CLUSTER_TYPE, resource_names: [] });
    await waitFor(() => received.length === 1, { description: 'the first response' });
    call.pause();
    for (let i = 0; i < 50; i++) {
      upstream.world.clusters = { [`outbound|80||flood-${i}.ns.svc.cluster.local`]: [{ address: '127.0.0.1', port: 9 }] };
      upstream.push();
    }
    call.resume();
    // The proxy keeps relaying: the last state arrives once the reader is back.
    await waitFor(
      () =>
        JSON.stringify(
          received[received.length - 1]?.resources.map((any) => protos.decodeAny({ type_url: any.type_url ?? CLUSTER_TYPE, value: any.value as Buffer })),
        ).includes('flood-49'),
      {
        timeoutMs: 10_000,
        description: 'the newest clusters after the flood',
      },
    );
    call.cancel();
  });

  test('losing the upstream ends the downstream stream with UNAVAILABLE, so the proxy starts over', async () => {
    const stream = new AdsTestStream(client.StreamAggregatedResources(new Metadata()) as never);
    stream.send({ node: nodeFor('app-2', 'ns'), type_url: CLUSTER_TYPE, resource_names: [] });
    await stream.next(5000);
    await upstream.close();
    expect((await stream.status).code).toBe(14);
  });
});

describe('the agent xDS proxy against a daemon it must not trust', () => {
  test('an upstream whose certificate does not chain to the trust bundle gets no stream and no token', async () => {
    const certs = join(dir, 'impostor');
    mkdirSync(certs, { recursive: true });
    const meshRoot = await certificateAuthority(certs, 'mesh-root');
    const forged = await selfSignedCertificate(certs, 'impostor', 'DNS:localhost,IP:127.0.0.1');
    const seenTokens: string[] = [];
    const impostor = await startTestXds(protos, {
      secureGrpcAddr: '127.0.0.1:0',
      tls: { keyPem: readFileSync(forged.keyFile, 'utf8'), certPem: readFileSync(forged.certFile, 'utf8') },
      auth: {
        authenticators: [{ name: 'recording', authenticate: async ({ bearerToken }) => (bearerToken && seenTokens.push(bearerToken), undefined) }],
        xdsAuth: true,
        xdsAuthPlaintext: true,
        identityCheck: false,
      },
    });
    await impostor.xds.secure?.waitForReady();
    const trust = newAgentTrustBundle({ initialPem: readFileSync(meshRoot.certFile, 'utf8'), clock: newRealClock(), log: newNopLogger('cache') });
    const guarded = newXdsProxy({
      listen: `unix:${join(dir, 'XDS-guarded')}`,
      upstream: `127.0.0.1:${impostor.xds.secure?.port() ?? 0}`,
      credentials: experimental.createCertificateProviderChannelCredentials(trust, null),
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost' },
      metadata: async () => {
        const metadata = new Metadata();
        metadata.set('authorization', 'Bearer the-workload-token');
        return metadata;
      },
      log: newNopLogger('ads'),
    });
    await guarded.start();
    const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
    const downstream = new Ctor(`unix:${join(dir, 'XDS-guarded')}`, credentials.createInsecure()) as unknown as typeof client;
    try {
      const stream = new AdsTestStream(downstream.StreamAggregatedResources(new Metadata()) as never);
      stream.send({ node: nodeFor('app-3', 'ns'), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await stream.status).code).toBe(14);
      expect(seenTokens).toEqual([]);
      expect(impostor.discovery.connections()).toHaveLength(0);
    } finally {
      downstream.close();
      await guarded.stop();
      await impostor.close();
    }
  });
});
