import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Metadata, credentials, makeGenericClientConstructor, status, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { waitFor } from '../testing/wait-for.js';
import { ADS_SERVICE, CSDS_SERVICE, loadEnvoyProtos, type EnvoyProtos } from './envoy/envoy-protos.js';
import {
  AdsTestStream,
  newAdsTestClient,
  nodeFor,
  startTestXds,
  type AdsTestClient,
  type RequestMessage,
  type ResponseMessage,
  type TestXds,
} from './testing/test-support.js';
import { CLUSTER_TYPE, DEBUG_SYNCZ_TYPE, DEBUG_TYPE } from './envoy/type-urls.js';
import type { XdsAuthenticator } from './xds-auth.js';
import { testTokenAuthenticator } from './testing/test-authenticators.js';

const run = promisify(execFile);

/** The SPIFFE URI of a presented client certificate (the chain was verified by TLS). */
const certAuthenticator: XdsAuthenticator = {
  name: 'test-cert',
  async authenticate({ peerCertificates }) {
    const leaf = peerCertificates?.[0];
    if (!leaf) return undefined;
    const uris = (new X509Certificate(leaf).subjectAltName ?? '').split(', ').filter((san) => san.startsWith('URI:'));
    return { identities: uris.map((uri) => uri.slice(4)) };
  },
};

let protos: EnvoyProtos;
let env: TestXds;
let client: AdsTestClient;
let dir: string;
let pem: Record<'ca' | 'serverKey' | 'serverCert' | 'clientKey' | 'clientCert', string>;
const policy = { authenticators: [testTokenAuthenticator, certAuthenticator], xdsAuth: true, xdsAuthPlaintext: true, identityCheck: true };

async function makeCertificates(): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'mesh-xds-'));
  const openssl = (args: string[]) => run('openssl', args, { cwd: dir });
  const key = (name: string) => openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  await Promise.all([key('ca'), key('server'), key('client')]);
  await openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/O=mesh test CA', '-days', '1', '-out', 'ca.pem']);
  const leaf = async (name: string, subject: string, san: string) => {
    await openssl(['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
    await run('sh', ['-c', `printf 'subjectAltName=${san}\\n' > ${name}.ext`], { cwd: dir });
    await openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ]);
  };
  await leaf('server', '/CN=meshd', 'DNS:localhost,IP:127.0.0.1');
  await leaf('client', '/O=mesh', 'URI:spiffe://cluster.local/ns/default/sa/app');
  const read = (file: string) => readFile(join(dir, file), 'utf8');
  pem = {
    ca: await read('ca.pem'),
    serverKey: await read('server.key'),
    serverCert: await read('server.pem'),
    clientKey: await read('client.key'),
    clientCert: await read('client.pem'),
  };
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  await makeCertificates();
  env = await startTestXds(protos, {
    auth: policy,
    secureGrpcAddr: '127.0.0.1:0',
    tls: { keyPem: pem.serverKey, certPem: pem.serverCert, caPem: pem.ca },
  });
  await env.xds.secure?.waitForReady();
  env.world.clusters = { a: [{ address: '10.0.0.1', port: 80 }] };
  await env.sync();
  client = newAdsTestClient(protos, env.port);
});

afterAll(async () => {
  client.close();
  await env.close();
  await rm(dir, { recursive: true, force: true });
});

const streams: AdsTestStream[] = [];
afterEach(async () => {
  policy.identityCheck = true;
  policy.xdsAuthPlaintext = true;
  for (const stream of streams.splice(0)) stream.cancel();
  await waitFor(() => env.discovery.connections().length === 0, { description: 'streams closed' });
});

function withToken(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

function open(metadata?: Metadata): AdsTestStream {
  const stream = client.sotw(metadata);
  streams.push(stream);
  return stream;
}

const appNode = () => nodeFor('app-1', 'default', { SERVICE_ACCOUNT: 'app' });

describe('xDS authentication and the identity check', () => {
  test('a stream without a credential is refused with UNAUTHENTICATED', async () => {
    const stream = open();
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    const result = await stream.status;
    expect(result.code).toBe(status.UNAUTHENTICATED);
    expect(stream.buffered()).toBe(0);
  });

  test('a bad credential is refused without saying why', async () => {
    const stream = open(withToken('garbage'));
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    const result = await stream.status;
    expect(result.code).toBe(status.UNAUTHENTICATED);
    expect(result.details).toBe('authentication failure');
  });

  test('an identity from another namespace gets PERMISSION_DENIED and no config', async () => {
    const stream = open(withToken('token:other:app'));
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    const result = await stream.status;
    expect(result.code).toBe(status.PERMISSION_DENIED);
    expect(result.details).toMatch(/default\/app/);
    expect(stream.buffered()).toBe(0);
  });

  test('another service account of the namespace is refused too', async () => {
    const stream = open(withToken('token:default:intruder'));
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    expect((await stream.status).code).toBe(status.PERMISSION_DENIED);
  });

  test('a matching identity gets its config', async () => {
    const stream = open(withToken('token:default:app'));
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    const response = await stream.next();
    expect(response.resources).toHaveLength(1);
    expect(env.discovery.connections()[0]?.identities).toEqual(['spiffe://cluster.local/ns/default/sa/app']);
  });

  test('with the identity check off, any authenticated identity is served', async () => {
    policy.identityCheck = false;
    const stream = open(withToken('token:other:app'));
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    expect((await stream.next()).resources).toHaveLength(1);
  });

  test('plaintext streams are not authenticated unless XDS_AUTH_PLAINTEXT', async () => {
    policy.xdsAuthPlaintext = false;
    const stream = open();
    stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
    expect((await stream.next()).resources).toHaveLength(1);
  });

  test('the debug type is refused to callers outside the system namespace', async () => {
    const stream = open(withToken('token:default:app'));
    stream.send({ node: appNode(), type_url: DEBUG_SYNCZ_TYPE });
    expect((await stream.status).code).toBe(status.PERMISSION_DENIED);
    const admin = open(withToken('token:mesh-system:meshctl'));
    admin.send({ node: nodeFor('meshctl-1', 'mesh-system'), type_url: DEBUG_SYNCZ_TYPE });
    expect((await admin.next()).type_url).toBe(DEBUG_SYNCZ_TYPE);
  });

  test('debug views over xDS: the system namespace reads all, a workload the config dump of its own namespace only', async () => {
    const proxy = open(withToken('token:default:app'));
    proxy.send({ node: appNode(), type_url: CLUSTER_TYPE });
    await proxy.next();
    const json = (response: { resources: { value?: Buffer }[] }): Record<string, unknown> =>
      JSON.parse(String(response.resources[0]?.value)) as Record<string, unknown>;

    const own = open(withToken('token:default:app'));
    own.send({ type_url: DEBUG_TYPE, resource_names: ['config_dump?proxyID=app-1.default'], node: appNode() });
    const dump = await own.next();
    expect(dump.type_url).toBe(DEBUG_TYPE);
    expect(JSON.stringify(json(dump))).toContain('"name":"a"');

    const stranger = open(withToken('token:other:app'));
    stranger.send({ type_url: DEBUG_TYPE, resource_names: ['config_dump?proxyID=app-1.default'], node: nodeFor('app-9', 'other', { SERVICE_ACCOUNT: 'app' }) });
    expect(await stranger.status).toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('not available for the current identity') });

    const admin = open(withToken('token:mesh-system:meshctl'));
    admin.send({ type_url: DEBUG_TYPE, resource_names: ['adsz'], node: nodeFor('meshctl-1', 'mesh-system') });
    const adsz = json(await admin.next());
    // The debug stream opened with the proxy's node is not listed as a second proxy.
    expect((adsz['clients'] as { proxy: string }[]).filter((entry) => entry.proxy === 'app-1.default')).toHaveLength(1);

    const unknown = open(withToken('token:mesh-system:meshctl'));
    unknown.send({ type_url: DEBUG_TYPE, resource_names: ['secrets'], node: nodeFor('meshctl-2', 'mesh-system') });
    expect(await unknown.status).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining('unknown debug resource "secrets"') });
  });

  test('debug views, syncz and CSDS are refused to unauthenticated streams on the plain-text port (UNAUTHENTICATED), whatever they ask', async () => {
    policy.xdsAuthPlaintext = false;
    // The proxy's own stream is served (no authentication on this port), its debug requests are not.
    const proxy = open();
    proxy.send({ node: appNode(), type_url: CLUSTER_TYPE });
    expect((await proxy.next()).resources).toHaveLength(1);
    for (const [type, names] of [
      [DEBUG_SYNCZ_TYPE, []],
      [DEBUG_TYPE, ['config_dump?proxyID=app-1.default']],
      [DEBUG_TYPE, ['syncz']],
    ] as const) {
      const anonymous = open();
      anonymous.send({ type_url: type, resource_names: [...names], node: nodeFor('tool-1', 'mesh-system') });
      expect(await anonymous.status).toMatchObject({ code: status.UNAUTHENTICATED, details: expect.stringContaining('authentication required') });
    }
    const Csds = makeGenericClientConstructor(protos.serviceDefinition(CSDS_SERVICE), 'ClientStatusDiscoveryService');
    const csds = new Csds(`127.0.0.1:${env.port}`, credentials.createInsecure()) as unknown as Client & {
      FetchClientStatus(request: object, callback: (error: { code: number } | null) => void): void;
    };
    try {
      const error = await new Promise<{ code: number } | null>((resolve) => csds.FetchClientStatus({}, resolve));
      expect(error?.code).toBe(status.PERMISSION_DENIED);
    } finally {
      csds.close();
    }
  });

  test('an absent proxy and one of another namespace give a workload the same answer', async () => {
    // The status the caller gets, less the `date` header: the two calls may straddle a second.
    const ask = async (proxyId: string): Promise<unknown> => {
      const stream = open(withToken('token:other:app'));
      stream.send({ type_url: DEBUG_TYPE, resource_names: [`config_dump?proxyID=${proxyId}`], node: nodeFor('app-9', 'other', { SERVICE_ACCOUNT: 'app' }) });
      const status = await stream.status;
      const metadata = { ...status.metadata.getMap() };
      delete metadata['date'];
      return { code: status.code, details: status.details, metadata };
    };
    const proxy = open(withToken('token:default:app'));
    proxy.send({ node: appNode(), type_url: CLUSTER_TYPE });
    await proxy.next();
    expect(await ask('app-1.default')).toEqual(await ask('nobody.default'));
  });

  test('the TLS listener authenticates a client certificate', async () => {
    const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
    const port = env.xds.secure?.port() ?? 0;
    const tls = credentials.createSsl(Buffer.from(pem.ca), Buffer.from(pem.clientKey), Buffer.from(pem.clientCert));
    const secureClient = new Ctor(`localhost:${port}`, tls) as unknown as Client &
      Record<'StreamAggregatedResources', () => ClientDuplexStream<RequestMessage, ResponseMessage>>;
    try {
      const stream = new AdsTestStream(secureClient.StreamAggregatedResources());
      streams.push(stream);
      stream.send({ node: appNode(), type_url: CLUSTER_TYPE });
      expect((await stream.next()).resources).toHaveLength(1);

      // Without a certificate or a token the TLS listener refuses the stream.
      const anonymous = new Ctor(`localhost:${port}`, credentials.createSsl(Buffer.from(pem.ca))) as unknown as typeof secureClient;
      const refused = new AdsTestStream(anonymous.StreamAggregatedResources());
      streams.push(refused);
      refused.send({ node: appNode(), type_url: CLUSTER_TYPE });
      expect((await refused.status).code).toBe(status.UNAUTHENTICATED);
      anonymous.close();
    } finally {
      secureClient.close();
    }
  });
});
