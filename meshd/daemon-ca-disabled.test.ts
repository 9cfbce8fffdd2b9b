import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { credentials, Metadata, status, type ChannelCredentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newTestAuthority, type TestAuthority } from '../ca/testing/test-authority.js';
import { loadSettings } from '../runtime/index.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { CLUSTER_TYPE, loadEnvoyProtos, newDeltaDiscoveryClient, newDiscoveryClient, type DiscoveryResponse, type EnvoyProtos } from '../xds/index.js';
import { nodeFor } from '../xds/testing/test-support.js';
import type { MeshdOptions } from './options.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess } from './testing/in-process-meshd.js';

// The daemon with ENABLE_CA_SERVER=false, run in process. With --tlsCertFile/--tlsKeyFile (and
// --caCertFile) it serves xDS over TLS on --secureGRPCAddr with the files, re-read as they change,
// and authenticates proxies as the reference does without a CA (a client certificate of
// --caCertFile's roots, or a token); without the files it says once which addresses it does not
// serve, and serves plain xDS only.

interface Daemon {
  readonly ports: { grpc: number; secure: number; http: number; https: number };
  readonly logFile: string;
  stop(): Promise<void>;
}

let protos: EnvoyProtos;
let workDir: string;

async function startDaemon(name: string, files: Partial<Pick<MeshdOptions, 'tlsCertFile' | 'tlsKeyFile' | 'caCertFile'>>): Promise<Daemon> {
  const [grpc, secure, http, https] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const logFile = join(workDir, `${name}.log`);
  const settings = loadSettings('pilot-discovery', { ENABLE_CA_SERVER: 'false', POD_NAME: name, PILOT_DEBOUNCE_AFTER: '10ms' });
  const daemon = startMeshdInProcess(
    meshdTestOptions(settings, {
      configDir: mkdtempSync(join(workDir, 'config-')),
      grpcAddr: `127.0.0.1:${grpc}`,
      secureGrpcAddr: `127.0.0.1:${secure}`,
      httpAddr: `127.0.0.1:${http}`,
      httpsAddr: `127.0.0.1:${https}`,
      logging: loggingTo(logFile, true),
      // The files are read again every 200 ms, so a test sees a replaced certificate served.
      tlsFilesRefreshMs: 200,
      ...files,
    }),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${http}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 20_000,
    description: `${name} ready`,
  });
  return {
    ports: { grpc, secure, http, https },
    logFile,
    stop: async () => {
      expect(await daemon.stop()).toBeUndefined();
    },
  };
}

/** The proxy `sleep` of namespace foo, as its certificate (spiffe://cluster.local/ns/foo/sa/sleep) says it is. */
const sleepNode = (): object => nodeFor('sleep-1', 'foo', { SERVICE_ACCOUNT: 'sleep' });
const SLEEP_ID = 'spiffe://cluster.local/ns/foo/sa/sleep';

/** TLS trusting `root`, with a client certificate when given. */
function tlsTo(root: string, client?: { key: { export(o: object): string | Buffer }; certPem: string }): ChannelCredentials {
  if (!client) return credentials.createSsl(Buffer.from(root));
  return credentials.createSsl(Buffer.from(root), Buffer.from(client.key.export({ format: 'pem', type: 'pkcs8' })), Buffer.from(client.certPem));
}

/** One state-of-the-world CDS request: the response, or how the stream ended (gRPC status code and details). */
async function sotwClusters(
  port: number,
  channel: ChannelCredentials,
  metadata?: Metadata,
): Promise<{ clusters: string[] } | { code: number; details: string }> {
  const client = newDiscoveryClient({
    protos,
    target: `127.0.0.1:${port}`,
    credentials: channel,
    channelOptions: { 'grpc.ssl_target_name_override': 'localhost' },
  });
  const call = client.stream(metadata ? { metadata } : {});
  try {
    return await new Promise((resolve) => {
      call.on('data', (response: DiscoveryResponse) => resolve({ clusters: client.decode(response).map((c) => String(c['name'])) }));
      call.on('error', (error: { code: number; details: string }) => resolve({ code: error.code, details: error.details }));
      call.write({ node: sleepNode(), type_url: CLUSTER_TYPE, resource_names: [] });
    });
  } finally {
    call.cancel();
    client.close();
  }
}

/** The serving certificate's SHA-256 fingerprint at `port` (TLS, trusting nothing). */
async function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      resolve(createHash('sha256').update(socket.getPeerCertificate().raw).digest('hex'));
      socket.end();
    });
    socket.on('error', reject);
  });
}

const fingerprintOf = (pem: string): string => createHash('sha256').update(new X509Certificate(pem).raw).digest('hex');

/** Resolves with the connection error's code (ECONNREFUSED when nothing listens), or 'connected'. */
function tcpOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

beforeAll(() => {
  protos = loadEnvoyProtos();
  workDir = mkdtempSync(join(tmpdir(), 'daemon-ca-disabled-'));
});

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('ENABLE_CA_SERVER=false with --tlsCertFile, --tlsKeyFile and --caCertFile', () => {
  let daemon: Daemon;
  let mesh: TestAuthority;
  let stranger: TestAuthority;
  let serving: { keyPem: string; certPem: string };
  const files = { cert: '', key: '', ca: '' };

  beforeAll(async () => {
    [mesh, stranger] = await Promise.all([newTestAuthority('cluster.local'), newTestAuthority('cluster.local')]);
    serving = mesh.loopbackServer();
    Object.assign(files, { cert: join(workDir, 'tls.crt'), key: join(workDir, 'tls.key'), ca: join(workDir, 'root-cert.pem') });
    writeFileSync(files.cert, serving.certPem);
    writeFileSync(files.key, serving.keyPem);
    writeFileSync(files.ca, mesh.rootPem);
    daemon = await startDaemon('meshd-files', { tlsCertFile: files.cert, tlsKeyFile: files.key, caCertFile: files.ca });
  }, 40_000);

  afterAll(async () => daemon?.stop());

  test('a proxy with a client certificate of --caCertFile gets xDS over TLS on --secureGRPCAddr, state of the world and delta', async () => {
    const channel = tlsTo(mesh.rootPem, mesh.workload(SLEEP_ID));
    // The files are read once the listener has bound: the first handshakes may come before.
    const sotw = await waitFor(
      async () => {
        const outcome = await sotwClusters(daemon.ports.secure, channel);
        return 'clusters' in outcome ? outcome : undefined;
      },
      { timeoutMs: 10_000, description: 'a CDS response over TLS' },
    );
    expect(sotw.clusters).toContain('PassthroughCluster');

    const responses: string[][] = [];
    const delta = newDeltaDiscoveryClient({
      protos,
      target: `127.0.0.1:${daemon.ports.secure}`,
      credentials: channel,
      channelOptions: { 'grpc.ssl_target_name_override': 'localhost' },
      node: sleepNode(),
      initial: [[CLUSTER_TYPE, []]],
      onResponse: (response) => responses.push(response.resources.map((resource) => resource.name)),
    });
    try {
      delta.start();
      const names = await waitFor(() => responses[0], { description: 'a delta CDS response over TLS' });
      expect(names).toContain('PassthroughCluster');
    } finally {
      delta.close();
    }
  });

  test('a client that does not trust the certificate of --tlsCertFile fails the handshake', async () => {
    const client = mesh.workload(SLEEP_ID);
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem, client))).toMatchObject({ clusters: expect.arrayContaining(['PassthroughCluster']) });
    // The same proxy trusting other roots: the listener is there, its certificate is not trusted.
    expect(await sotwClusters(daemon.ports.secure, tlsTo(stranger.rootPem, client))).toEqual({
      code: status.UNAVAILABLE,
      details: expect.stringMatching(/certificate/i),
    });
  });

  test('over TLS a proxy must prove who it is: no credential, or a certificate of other roots, is refused; a foreign identity is denied', async () => {
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem))).toMatchObject({ code: status.UNAUTHENTICATED });
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem, stranger.workload(SLEEP_ID)))).toMatchObject({ code: status.UNAUTHENTICATED });
    const bearer = new Metadata();
    bearer.set('authorization', 'Bearer not-a-token');
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem), bearer)).toMatchObject({ code: status.UNAUTHENTICATED });
    // Authenticated, but as another namespace than the proxy claims (PILOT_ENABLE_XDS_IDENTITY_CHECK).
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem, mesh.workload('spiffe://cluster.local/ns/bar/sa/sleep')))).toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    // Plain text stays open, unauthenticated, as before.
    expect(await sotwClusters(daemon.ports.grpc, credentials.createInsecure())).toMatchObject({ clusters: expect.arrayContaining(['PassthroughCluster']) });
  });

  test('the admission webhooks serve the same certificate from the files', async () => {
    expect(await servedFingerprint(daemon.ports.https)).toBe(fingerprintOf(serving.certPem));
    expect(await servedFingerprint(daemon.ports.secure)).toBe(fingerprintOf(serving.certPem));
  });

  test('a replaced certificate is served once the files are read again, on the xDS port and the webhook port', async () => {
    const renewed = mesh.loopbackServer();
    writeFileSync(files.key, renewed.keyPem);
    writeFileSync(files.cert, renewed.certPem);
    const expected = fingerprintOf(renewed.certPem);
    await waitFor(async () => (await servedFingerprint(daemon.ports.secure)) === expected, {
      timeoutMs: 10_000,
      description: 'the renewed certificate on --secureGRPCAddr',
    });
    await waitFor(async () => (await servedFingerprint(daemon.ports.https)) === expected, {
      timeoutMs: 10_000,
      description: 'the renewed certificate on --httpsAddr',
    });
    expect(await sotwClusters(daemon.ports.secure, tlsTo(mesh.rootPem, mesh.workload(SLEEP_ID)))).toMatchObject({
      clusters: expect.arrayContaining(['PassthroughCluster']),
    });
  });
});

describe('ENABLE_CA_SERVER=false without --tlsCertFile', () => {
  let daemon: Daemon;

  beforeAll(async () => {
    daemon = await startDaemon('meshd-plain', {});
  }, 40_000);

  afterAll(async () => daemon?.stop());

  const notServedEntries = (): Array<Record<string, unknown>> =>
    (existsSync(daemon.logFile) ? readFileSync(daemon.logFile, 'utf8') : '')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => String(entry['msg']).startsWith('no serving certificate'));

  test('the log says once, at start, which addresses are not served, why, and the flags that would serve them', async () => {
    await waitFor(() => notServedEntries().length > 0, { description: 'the not-served log line' });
    const entries = notServedEntries();
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({
      level: 'warn',
      notServed: [
        `--secureGRPCAddr 127.0.0.1:${daemon.ports.secure} (secure xDS)`,
        `--httpsAddr 127.0.0.1:${daemon.ports.https} (injection and validation webhooks)`,
      ],
      servedWith: expect.stringContaining('--tlsCertFile and --tlsKeyFile'),
      plainXds: `127.0.0.1:${daemon.ports.grpc}`,
    });
    expect(entry?.['msg']).toContain('ENABLE_CA_SERVER=false');
  });

  test('the secure xDS port and the webhook port refuse connections; plain xDS is served on --grpcAddr', async () => {
    expect(await tcpOutcome(daemon.ports.secure)).toBe('ECONNREFUSED');
    expect(await tcpOutcome(daemon.ports.https)).toBe('ECONNREFUSED');
    expect(await sotwClusters(daemon.ports.grpc, credentials.createInsecure())).toMatchObject({ clusters: expect.arrayContaining(['PassthroughCluster']) });
  });
});
