import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Metadata,
  credentials,
  makeGenericClientConstructor,
  status,
  type ChannelCredentials,
  type Client,
  type ClientDuplexStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import fc from 'fast-check';
import { fuzzParameters } from '../testing/fuzz.js';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';
import { ADS_SERVICE, loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import { jsonToStruct, type JsonValue } from './envoy/struct-json.js';
import { CLUSTER_TYPE, DEBUG_SYNCZ_TYPE, DEBUG_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE } from './envoy/type-urls.js';
import { AdsTestStream, nodeFor, startTestXds, type RequestMessage, type ResponseMessage, type TestXds } from './testing/test-support.js';
import type { XdsAuthenticator } from './xds-auth.js';
import { testTokenAuthenticator } from './testing/test-authenticators.js';

// The ADS handler on an attacker's input, on both listeners, before and after authentication:
// random and truncated DiscoveryRequests (SotW and delta), and random bytes as the message body.
// Every bad stream ends with a gRPC status, no handler throws (the "request failed" log), and
// canary streams opened first keep receiving pushes. A crash of the daemon would be an unhandled
// rejection or an uncaught exception: jest-circus listens for both on the host process and fails
// the running test (a test cannot listen itself: its `process` is a sandbox copy).

const IDENTITY = { namespace: 'default', serviceAccount: 'app' };

/** The presented client certificate is this test's workload (TLS verified the chain). */
const certAuthenticator: XdsAuthenticator = {
  name: 'test-cert',
  async authenticate({ peerCertificates }) {
    return peerCertificates?.[0] ? { identities: [`spiffe://cluster.local/ns/${IDENTITY.namespace}/sa/${IDENTITY.serviceAccount}`] } : undefined;
  },
};

type Channel = 'plain' | 'tls-anonymous' | 'tls-certificate' | 'tls-token' | 'tls-bad-token';
type Method = 'StreamAggregatedResources' | 'DeltaAggregatedResources';
type StreamingClient = Client & Record<Method, (metadata?: Metadata) => ClientDuplexStream<unknown, unknown>>;

let protos: EnvoyProtos;
let env: TestXds;
let dir: string;
const logs: LogEntry[] = [];
const typed = new Map<Channel, StreamingClient>();
const raw = new Map<Channel, StreamingClient>();
let canaries: { sotw: AdsTestStream; delta: AdsTestStream };

/** The ADS service with identity serializers: whatever bytes are written go out as the message. */
function rawDefinition(definition: ServiceDefinition): ServiceDefinition {
  const identity = (bytes: Buffer): Buffer => bytes;
  return Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      { ...method, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
    ]),
  ) as ServiceDefinition;
}

function tokenMetadata(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

function metadataFor(channel: Channel): Metadata | undefined {
  if (channel === 'tls-token') return tokenMetadata(`token:${IDENTITY.namespace}:${IDENTITY.serviceAccount}`);
  if (channel === 'tls-bad-token') return tokenMetadata('not a token');
  return undefined;
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  dir = await mkdtemp(join(tmpdir(), 'mesh-xds-fuzz-'));
  const ca = await certificateAuthority(dir, 'fuzz-ca');
  const [server, workload] = await Promise.all([
    signedCertificate(dir, 'meshd', 'DNS:localhost,IP:127.0.0.1', ca),
    signedCertificate(dir, 'workload', `URI:spiffe://cluster.local/ns/${IDENTITY.namespace}/sa/${IDENTITY.serviceAccount}`, ca),
  ]);
  const read = (file: string): Promise<Buffer> => readFile(file);
  const [caPem, serverKey, serverCert, clientKey, clientCert] = await Promise.all([
    read(ca.certFile),
    read(server.keyFile),
    read(server.certFile),
    read(workload.keyFile),
    read(workload.certFile),
  ]);
  env = await startTestXds(protos, {
    // Plain text serves anyone (XDS_AUTH_PLAINTEXT off); the TLS listener authenticates.
    auth: { authenticators: [testTokenAuthenticator, certAuthenticator], xdsAuth: true, xdsAuthPlaintext: false, identityCheck: true },
    secureGrpcAddr: '127.0.0.1:0',
    tls: { keyPem: serverKey.toString(), certPem: serverCert.toString(), caPem: caPem.toString() },
    log: newRecordingLogger(logs, {}, 'ads'),
  });
  await env.xds.secure?.waitForReady();
  env.world.clusters = { a: [{ address: '10.0.0.1', port: 80 }] };
  env.world.listeners = { 'a:80': 'a' };
  await env.sync();

  const securePort = env.xds.secure?.port() ?? 0;
  const targets: Record<Channel, [string, ChannelCredentials]> = {
    plain: [`127.0.0.1:${env.port}`, credentials.createInsecure()],
    'tls-anonymous': [`localhost:${securePort}`, credentials.createSsl(caPem)],
    'tls-certificate': [`localhost:${securePort}`, credentials.createSsl(caPem, clientKey, clientCert)],
    'tls-token': [`localhost:${securePort}`, credentials.createSsl(caPem)],
    'tls-bad-token': [`localhost:${securePort}`, credentials.createSsl(caPem)],
  };
  const definition = protos.serviceDefinition(ADS_SERVICE);
  const Typed = makeGenericClientConstructor(definition, 'AggregatedDiscoveryService');
  const Raw = makeGenericClientConstructor(rawDefinition(definition), 'AggregatedDiscoveryService');
  for (const [channel, [target, creds]] of Object.entries(targets) as [Channel, [string, ChannelCredentials]][]) {
    typed.set(channel, new Typed(target, creds) as unknown as StreamingClient);
    raw.set(channel, new Raw(target, creds) as unknown as StreamingClient);
  }

  // Two healthy streams opened before any fuzzing: SotW on plain text, delta on TLS with a certificate.
  const plain = typed.get('plain') as StreamingClient;
  const secure = typed.get('tls-certificate') as StreamingClient;
  canaries = {
    sotw: new AdsTestStream(plain.StreamAggregatedResources() as ClientDuplexStream<RequestMessage, ResponseMessage>),
    delta: new AdsTestStream(secure.DeltaAggregatedResources() as ClientDuplexStream<RequestMessage, ResponseMessage>),
  };
  const node = nodeFor('canary', IDENTITY.namespace, { SERVICE_ACCOUNT: IDENTITY.serviceAccount });
  canaries.sotw.send({ node, type_url: CLUSTER_TYPE });
  const first = await canaries.sotw.next();
  canaries.sotw.send({ type_url: CLUSTER_TYPE, version_info: first.version_info, response_nonce: first.nonce });
  canaries.delta.send({ node: nodeFor('canary-delta', IDENTITY.namespace, { SERVICE_ACCOUNT: IDENTITY.serviceAccount }), type_url: CLUSTER_TYPE });
  const firstDelta = await canaries.delta.next();
  canaries.delta.send({ type_url: CLUSTER_TYPE, response_nonce: firstDelta.nonce });
  await waitFor(() => env.discovery.connections().length === 2, { description: 'canaries connected' });
});

afterAll(async () => {
  canaries.sotw.cancel();
  canaries.delta.cancel();
  for (const client of [...typed.values(), ...raw.values()]) client.close();
  await env.close();
  await rm(dir, { recursive: true, force: true });
});

const TYPE_URLS = [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE, DEBUG_TYPE, DEBUG_SYNCZ_TYPE, 'type.googleapis.com/', ''];
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '~', '*', 'a', 'a:80', 'route/a:80', 'config_dump?proxyID=canary.default', 'syncz'),
);
const typeUrl = fc.oneof(fc.constantFrom(...TYPE_URLS), text);
const metadataJson = fc.oneof(
  fc.constant<Record<string, JsonValue>>({ NAMESPACE: IDENTITY.namespace, SERVICE_ACCOUNT: IDENTITY.serviceAccount }),
  fc.dictionary(
    fc.constantFrom('NAMESPACE', 'SERVICE_ACCOUNT', 'INSTANCE_IPS', 'LABELS', 'CLUSTER_ID', 'GENERATOR', 'MESH_VERSION', 'x'),
    fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
  ),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>, { maxKeys: 4 }),
);
const nodeId = fc.oneof(
  fc.constantFrom(
    `sidecar~10.0.0.9~fuzz.${IDENTITY.namespace}~${IDENTITY.namespace}.svc.cluster.local`,
    `router~10.0.0.9~gw.${IDENTITY.namespace}~${IDENTITY.namespace}.svc.cluster.local`,
  ),
  fc.tuple(fc.constantFrom('sidecar', 'router', 'x', ''), fc.oneof(fc.ipV4(), fc.ipV6(), text), text, text).map((parts) => parts.join('~')),
  text,
);
const validNode = fc.constantFrom('fuzz', 'fuzz-2').map((pod) => nodeFor(pod, IDENTITY.namespace, { SERVICE_ACCOUNT: IDENTITY.serviceAccount }));
const randomNode = fc.option(
  fc.record(
    {
      id: nodeId,
      cluster: text,
      metadata: metadataJson.map((json) => jsonToStruct(json)),
      locality: fc.record({ region: text, zone: text, sub_zone: text }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);
const node = fc.oneof({ arbitrary: validNode, weight: 2 }, { arbitrary: randomNode, weight: 3 });
const errorDetail = fc.option(fc.record({ code: fc.integer({ min: -1, max: 20 }), message: text }), { nil: undefined });
const names = fc.array(text, { maxLength: 4 });

const sotwRequest = fc.record(
  { node, type_url: typeUrl, resource_names: names, version_info: text, response_nonce: text, error_detail: errorDetail },
  { requiredKeys: ['type_url'] },
);
const deltaRequest = fc.record(
  {
    node,
    type_url: typeUrl,
    resource_names_subscribe: names,
    resource_names_unsubscribe: names,
    initial_resource_versions: fc.dictionary(text, text, { maxKeys: 3 }),
    response_nonce: text,
    error_detail: errorDetail,
  },
  { requiredKeys: ['type_url'] },
);

/** A stream: a first request that often connects, then requests that reach the request handler. */
function streamOf<T>(request: fc.Arbitrary<T>): fc.Arbitrary<T[]> {
  const first = request.chain((message) =>
    fc.oneof(
      fc.constant(message),
      validNode.map((valid) => ({ ...message, node: valid })),
    ),
  );
  return fc.tuple(first, fc.array(request, { maxLength: 4 })).map(([head, rest]) => [head, ...rest]);
}

const channel = fc.constantFrom<Channel>('plain', 'tls-anonymous', 'tls-certificate', 'tls-token', 'tls-bad-token');

/** Writes `messages`, half-closes, and waits for the stream's status (a stream that never ends is a finding). */
async function exchange(
  client: StreamingClient,
  method: Method,
  metadata: Metadata | undefined,
  messages: readonly unknown[],
): Promise<{ code: number; responses: number }> {
  const call = metadata ? client[method](metadata) : client[method]();
  let responses = 0;
  call.on('data', () => {
    responses += 1;
  });
  call.on('error', () => undefined);
  const ended = new Promise<number>((resolve) => call.on('status', (result: { code: number }) => resolve(result.code)));
  for (const message of messages) call.write(message);
  call.end();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the stream got no status within 5 s')), 5000);
  });
  try {
    const code = await Promise.race([ended, timeout]);
    return { code, responses };
  } finally {
    clearTimeout(timer);
    call.cancel();
  }
}

function handlerFailures(): LogEntry[] {
  const failures = logs.filter((entry) => entry.level === 'error');
  logs.length = 0;
  return failures;
}

const ALLOWED_CODES = new Set<number>([
  status.OK,
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.INTERNAL,
  status.CANCELLED,
]);

async function expectEnds(result: Promise<{ code: number; responses: number }>): Promise<{ code: number; responses: number }> {
  const outcome = await result;
  expect(ALLOWED_CODES.has(outcome.code)).toBe(true);
  expect(handlerFailures()).toEqual([]);
  return outcome;
}

/** Each run opens a stream: about 3 ms. */
const RUNS = { numRuns: 60, longRuns: 10_000 };

describe('the ADS handler under fuzzing', () => {
  test('random SotW requests on every listener and credential end with a status', async () => {
    await fc.assert(
      fc.asyncProperty(channel, streamOf(sotwRequest), async (on, requests) => {
        await expectEnds(exchange(typed.get(on) as StreamingClient, 'StreamAggregatedResources', metadataFor(on), requests));
      }),
      fuzzParameters(RUNS),
    );
  });

  test('random delta requests on every listener and credential end with a status', async () => {
    await fc.assert(
      fc.asyncProperty(channel, streamOf(deltaRequest), async (on, requests) => {
        await expectEnds(exchange(typed.get(on) as StreamingClient, 'DeltaAggregatedResources', metadataFor(on), requests));
      }),
      fuzzParameters(RUNS),
    );
  });

  test('random and truncated bytes as the message body end with a status', async () => {
    const sotwType = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
    const deltaType = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
    const encoded = (delta: boolean, request: object): Buffer => {
      const type = delta ? deltaType : sotwType;
      return Buffer.from(type.encode(type.fromObject(request)).finish());
    };
    const body = (delta: boolean): fc.Arbitrary<Buffer> =>
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
        fc.tuple(delta ? deltaRequest : sotwRequest, fc.nat()).map(([request, cut]) => {
          const bytes = encoded(delta, request);
          return bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length);
        }),
        fc.tuple(delta ? deltaRequest : sotwRequest, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([request, at, value]) => {
          const bytes = encoded(delta, request);
          if (bytes.length > 0) bytes[at % bytes.length] = value;
          return bytes;
        }),
      );
    // Often a well-formed first request (the stream connects), then the damaged bodies.
    const messagesOf = (delta: boolean): fc.Arbitrary<Buffer[]> =>
      fc
        .tuple(
          fc.option(streamOf(delta ? deltaRequest : sotwRequest).map((requests) => encoded(delta, requests[0] as object))),
          fc.array(body(delta), { minLength: 1, maxLength: 3 }),
        )
        .map(([head, rest]) => (head === null ? rest : [head, ...rest]));
    const rawStream = fc.boolean().chain((delta) => fc.record({ delta: fc.constant(delta), messages: messagesOf(delta) }));
    await fc.assert(
      fc.asyncProperty(channel, rawStream, async (on, { delta, messages }) => {
        await expectEnds(exchange(raw.get(on) as StreamingClient, delta ? 'DeltaAggregatedResources' : 'StreamAggregatedResources', metadataFor(on), messages));
      }),
      fuzzParameters(RUNS),
    );
  });

  test('a valid first request from the authenticated workload is served', async () => {
    const valid = { node: nodeFor('served', IDENTITY.namespace, { SERVICE_ACCOUNT: IDENTITY.serviceAccount }), type_url: CLUSTER_TYPE };
    for (const on of ['plain', 'tls-certificate', 'tls-token'] as const) {
      const outcome = await expectEnds(exchange(typed.get(on) as StreamingClient, 'StreamAggregatedResources', metadataFor(on), [valid]));
      expect(outcome).toEqual({ code: status.OK, responses: 1 });
    }
    for (const on of ['tls-anonymous', 'tls-bad-token'] as const) {
      expect((await expectEnds(exchange(typed.get(on) as StreamingClient, 'StreamAggregatedResources', metadataFor(on), [valid]))).code).toBe(
        status.UNAUTHENTICATED,
      );
    }
  });

  test('afterwards the canaries still receive pushes and no fuzzed stream is left connected', async () => {
    await waitFor(() => env.discovery.connections().length === 2, { description: 'only the canaries connected' });
    env.world.clusters = { ...env.world.clusters, b: [{ address: '10.0.0.2', port: 80 }] };
    env.push();
    const pushed = await canaries.sotw.next();
    expect(pushed.resources.map((resource) => resource.name ?? protos.decodeAny(resource as { type_url: string; value: Buffer }).name)).toHaveLength(2);
    const delta = await canaries.delta.next();
    expect(delta.resources.map((resource) => resource.name)).toContain('b');
  });
});
