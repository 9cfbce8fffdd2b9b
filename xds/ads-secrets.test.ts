import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { newMeshModel, pushRequestOf, type MeshModelWriter } from '../controllers/index.js';
import { newMetrics, type MeshMetrics } from '../runtime/index.js';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import { SECRET_TYPE } from './envoy/type-urls.js';
import { buildPushContext, type PushContext } from './model/index.js';
import { newMeshGenerators } from './mesh-generators.js';
import { newSecretRefusalReporter } from './secret-refusal-reporter.js';
import {
  DEFAULT_TUNING,
  metricValue,
  newAdsTestClient,
  nodeFor,
  type AdsTestClient,
  type AdsTestStream,
  type ResponseMessage,
} from './testing/test-support.js';
import { newXdsServer, type XdsServer } from './xds-server.js';
import { testTokenAuthenticator } from './testing/test-authenticators.js';

interface Pem {
  cert: string;
  key: string;
}

let protos: EnvoyProtos;
let dir: string;
let ca: string;
let first: Pem;
let second: Pem;
let foreign: Pem;
let model: MeshModelWriter;
let metrics: MeshMetrics<'pilot-discovery'>;
const logs: LogEntry[] = [];
const clock = new FakeClock();
let xds: XdsServer<PushContext>;
let client: AdsTestClient;
const controller = new AbortController();
let running: Promise<unknown>[];

async function pemOf(name: string, issuer: { keyFile: string; certFile: string }): Promise<Pem> {
  const made = await signedCertificate(dir, name, `DNS:${name}.example.com`, issuer);
  return { cert: await readFile(made.certFile, 'utf8'), key: await readFile(made.keyFile, 'utf8') };
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  dir = await mkdtemp(join(tmpdir(), 'mesh-ads-secrets-'));
  const authority = await certificateAuthority(dir, 'credential-ca');
  ca = await readFile(authority.certFile, 'utf8');
  [first, second, foreign] = await Promise.all([pemOf('first', authority), pemOf('second', authority), pemOf('foreign', authority)]);
  model = newMeshModel({ domain: 'cluster.local', clusterId: 'cluster-a', useEndpointSlices: false });
  model.credentials.apply({ namespace: 'foo', name: 'cred', certificateChain: first.cert, privateKey: first.key, caCertificate: ca });
  model.credentials.apply({ namespace: 'bar', name: 'other', certificateChain: foreign.cert, privateKey: foreign.key });
  metrics = newMetrics('pilot-discovery');
  xds = newXdsServer<PushContext>({
    protos,
    generators: newMeshGenerators({ onRefused: newSecretRefusalReporter(newRecordingLogger(logs, {}, 'ads'), metrics) }),
    buildPushContext: () => buildPushContext(model),
    isReady: () => true,
    tuning: DEFAULT_TUNING,
    transport: { keepaliveIntervalMs: 30_000, keepaliveTimeoutMs: 10_000, maxConnectionAgeMs: 2 ** 53, maxRecvMsgSize: 4 * 1024 * 1024, maxStreams: 1000 },
    grpcAddr: '127.0.0.1:0',
    auth: { authenticators: [testTokenAuthenticator], xdsAuth: true, xdsAuthPlaintext: true, identityCheck: false },
    clock,
    metrics,
    log: newRecordingLogger([], {}, 'ads'),
    shutdownTimeoutMs: 1000,
    newStreamsPerSecond: 0,
  });
  running = xds.runnables.map((runnable) => runnable.start(controller.signal));
  await xds.plaintext.waitForReady();
  client = newAdsTestClient(protos, xds.plaintext.port());
});

afterAll(async () => {
  client?.close();
  controller.abort();
  await Promise.allSettled(running ?? []);
  await rm(dir, { recursive: true, force: true });
});

function as(namespace: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer token:${namespace}:gateway`);
  return metadata;
}

interface Secret {
  name: string;
  tls_certificate?: { certificate_chain: { inline_bytes: string }; private_key: { inline_bytes: string } };
  validation_context?: { trusted_ca: { inline_bytes: string } };
}

function secretsOf(response: ResponseMessage): Secret[] {
  return response.resources.map((any) => protos.decodeAny({ type_url: any.type_url ?? '', value: any.value ?? Buffer.alloc(0) }) as unknown as Secret);
}

const text = (base64: string | undefined): string => Buffer.from(base64 ?? '', 'base64').toString();

async function ask(stream: AdsTestStream, node: object, names: string[]): Promise<Secret[]> {
  stream.send({ node, type_url: SECRET_TYPE, resource_names: names });
  const response = await stream.next();
  expect(response.type_url).toBe(SECRET_TYPE);
  stream.send({ type_url: SECRET_TYPE, resource_names: names, version_info: response.version_info, response_nonce: response.nonce });
  return secretsOf(response);
}

describe('Secrets over ADS (credentialName)', () => {
  test('a gateway gets its own namespace’s secret and its CA, and is refused a foreign one (logged and counted)', async () => {
    const stream = client.sotw(as('foo'));
    const refusedBefore = await metricValue(metrics, 'pilot_sds_certificate_errors_total');
    const secrets = await ask(stream, nodeFor('gw-1', 'foo', {}, 'router'), [
      'kubernetes://cred',
      'kubernetes://cred-cacert',
      'kubernetes://bar/other',
      'kubernetes://foo/cred',
    ]);
    stream.close();
    expect(secrets.map((secret) => secret.name).sort()).toEqual(['kubernetes://cred', 'kubernetes://cred-cacert', 'kubernetes://foo/cred']);
    const certificate = secrets.find((secret) => secret.name === 'kubernetes://cred');
    expect(text(certificate?.tls_certificate?.certificate_chain.inline_bytes)).toBe(first.cert);
    expect(text(certificate?.tls_certificate?.private_key.inline_bytes)).toBe(first.key);
    // ca.crt of the same Secret serves as its `-cacert` resource.
    expect(text(secrets.find((secret) => secret.name === 'kubernetes://cred-cacert')?.validation_context?.trusted_ca.inline_bytes)).toBe(ca);
    expect(JSON.stringify(secrets)).not.toContain(Buffer.from(foreign.key).toString('base64'));
    expect(await metricValue(metrics, 'pilot_sds_certificate_errors_total')).toBe(refusedBefore + 1);
    const refusal = logs.find((entry) => entry.message === 'refused secrets the proxy may not read' && entry.fields['proxy'] === 'gw-1.foo');
    expect(refusal?.fields['refused']).toEqual(['kubernetes://bar/other (foreign-namespace)']);
  });

  test('the verified identity decides, not the namespace the node claims', async () => {
    // The node says bar; the token proves foo: bar's secret is refused, foo's is served.
    const stream = client.sotw(as('foo'));
    const secrets = await ask(stream, nodeFor('liar', 'bar', {}, 'router'), ['kubernetes://other', 'kubernetes://bar/other', 'kubernetes://foo/cred']);
    stream.close();
    expect(secrets.map((secret) => secret.name)).toEqual(['kubernetes://foo/cred']);
  });

  test('a sidecar is refused every secret, even of its own namespace', async () => {
    const stream = client.sotw(as('foo'));
    const secrets = await ask(stream, nodeFor('app-1', 'foo'), ['kubernetes://cred', 'kubernetes://cred-cacert']);
    stream.close();
    expect(secrets).toEqual([]);
    expect(logs.some((entry) => entry.fields['proxy'] === 'app-1.foo' && String(entry.fields['refused']).includes('not-a-gateway'))).toBe(true);
  });

  test('rotation: a changed Secret is pushed to the gateway that watches it, without a new request', async () => {
    const stream = client.sotw(as('foo'));
    const names = ['kubernetes://cred'];
    await ask(stream, nodeFor('gw-2', 'foo', {}, 'router'), names);
    model.credentials.apply({ namespace: 'foo', name: 'cred', certificateChain: second.cert, privateKey: second.key, caCertificate: ca });
    xds.configUpdate(
      pushRequestOf({ full: true, reason: 'config', configsUpdated: [{ kind: 'Secret', namespace: 'foo', name: 'cred' }], startedAt: clock.now() }),
    );
    clock.advance(DEFAULT_TUNING.debounceAfterMs);
    const pushed = await stream.next();
    expect(pushed.type_url).toBe(SECRET_TYPE);
    expect(text(secretsOf(pushed)[0]?.tls_certificate?.certificate_chain.inline_bytes)).toBe(second.cert);
    // A change to another namespace’s Secret sends nothing to this gateway (bounded wait: an absence).
    stream.send({ type_url: SECRET_TYPE, resource_names: names, version_info: pushed.version_info, response_nonce: pushed.nonce });
    model.credentials.apply({ namespace: 'bar', name: 'other', certificateChain: first.cert, privateKey: first.key });
    const before = xds.discovery.lastPush();
    xds.configUpdate(
      pushRequestOf({ full: true, reason: 'config', configsUpdated: [{ kind: 'Secret', namespace: 'bar', name: 'other' }], startedAt: clock.now() }),
    );
    clock.advance(DEFAULT_TUNING.debounceAfterMs);
    await waitFor(() => xds.discovery.lastPush() !== before, { description: 'the push ran' });
    await expect(stream.next(300)).rejects.toThrow('no response');
    stream.close();
  });
});
