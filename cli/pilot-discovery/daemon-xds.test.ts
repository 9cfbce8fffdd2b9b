import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, makeGenericClientConstructor, Metadata, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { selfSignedCertificate, signedCertificate, type KeyAndCert } from '../../testing/openssl.js';
import { collect, PROJECT_ROOT, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { ADS_SERVICE, CLUSTER_TYPE, DEBUG_SYNCZ_TYPE, DEBUG_TYPE, ENDPOINT_TYPE, loadEnvoyProtos, ROUTE_TYPE, type EnvoyProtos } from '../../xds/index.js';
import { AdsTestStream, newAdsTestClient, nodeFor, type AdsTestClient, type ResponseMessage } from '../../xds/testing/test-support.js';

// The built daemon on the bundled samples, with xDS served to raw ADS clients over plain text
// (--grpcAddr) and TLS with a token (--secureGRPCAddr, shared with the CA).
let daemon: ChildProcess;
let exited: Promise<unknown>;
let workDir: string;
let issuer: { server: Server; url: string; sign: (subject: string) => Promise<string> };
let protos: EnvoyProtos;
let plain: AdsTestClient;
const ports = { grpc: 0, secure: 0, http: 0, monitoring: 0 };

async function startIssuer(): Promise<typeof issuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k', alg: 'ES256', use: 'sig' };
  let url = '';
  const server = createServer((req, res) => {
    const body = req.url === '/.well-known/openid-configuration' ? { issuer: url, jwks_uri: `${url}/jwks` } : req.url === '/jwks' ? { keys: [jwk] } : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const sign = (subject: string): Promise<string> =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .setIssuer(url)
      .setSubject(subject)
      .setAudience('mesh-ca')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey as CryptoKey);
  return { server, url, sign };
}

/** One ADS stream over TLS to --secureGRPCAddr, trusting the daemon's local root. */
function secureStream(token?: string, clientCertificate?: KeyAndCert): { stream: AdsTestStream; client: Client } {
  const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
  const root = readFileSync(join(workDir, 'var/lib/mesh/ca/root-cert.pem'));
  const tls = clientCertificate
    ? credentials.createSsl(root, readFileSync(clientCertificate.keyFile), readFileSync(clientCertificate.certFile))
    : credentials.createSsl(root);
  const client = new Ctor(`127.0.0.1:${ports.secure}`, tls, { 'grpc.ssl_target_name_override': 'localhost' });
  const metadata = new Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const call = (client as unknown as { StreamAggregatedResources(m: Metadata): ClientDuplexStream<object, ResponseMessage> }).StreamAggregatedResources(
    metadata,
  );
  return { stream: new AdsTestStream(call as never), client };
}

const sleepFoo = (): object => ({
  ...nodeFor('sleep-foo', 'foo', { SERVICE_ACCOUNT: 'sleep', INSTANCE_IPS: '127.0.1.20' }),
  id: 'sidecar~127.0.1.20~sleep-foo.foo~foo.svc.cluster.local',
});

/** The next response of a type; responses of other types (pushes) are ACKed and skipped. */
async function nextOfType(stream: AdsTestStream, typeUrl: string, names: string[] = []): Promise<ResponseMessage> {
  for (;;) {
    const response = await stream.next(5000);
    if (response.type_url === typeUrl) return response;
    stream.send({
      type_url: response.type_url,
      version_info: response.version_info,
      response_nonce: response.nonce,
      resource_names: response.type_url === CLUSTER_TYPE ? [] : names,
    });
  }
}

function decoded(response: ResponseMessage): Record<string, unknown>[] {
  return response.resources.map((any) => protos.decodeAny({ type_url: any.type_url ?? response.type_url, value: any.value as Buffer }));
}

beforeAll(async () => {
  protos = loadEnvoyProtos();
  [ports.grpc, ports.secure, ports.http, ports.monitoring] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  issuer = await startIssuer();
  workDir = mkdtempSync(join(tmpdir(), 'daemon-xds-'));
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), join(workDir, 'config'), { recursive: true });
  daemon = startBin(
    'pilot-discovery',
    [
      'discovery',
      '--configDir',
      join(workDir, 'config'),
      '--grpcAddr',
      `127.0.0.1:${ports.grpc}`,
      '--secureGRPCAddr',
      `127.0.0.1:${ports.secure}`,
      '--httpAddr',
      `127.0.0.1:${ports.http}`,
      '--monitoringAddr',
      `127.0.0.1:${ports.monitoring}`,
      '--httpsAddr',
      '127.0.0.1:0',
      '--ctrlz_port',
      '0',
    ],
    { PILOT_DEBOUNCE_AFTER: '50ms', TOKEN_ISSUER: issuer.url, AUDIENCE: 'mesh-ca' },
    workDir,
  );
  exited = collect(daemon, 60_000);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the daemon to be ready' });
  plain = newAdsTestClient(protos, ports.grpc);
});

afterAll(async () => {
  plain?.close();
  if (daemon?.exitCode === null) daemon.kill('SIGTERM');
  await exited?.catch(() => undefined);
  await new Promise<void>((resolve) => issuer?.server.close(() => resolve()));
  rmSync(workDir, { recursive: true, force: true });
});

describe('the daemon serves xDS', () => {
  test('over plain text: clusters, endpoints and routes for a sidecar of the samples; a new pod is pushed over EDS', async () => {
    const stream = plain.sotw();
    try {
      stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      const cds = await nextOfType(stream, CLUSTER_TYPE);
      const clusters = decoded(cds).map((cluster) => cluster['name']);
      expect(clusters).toContain('outbound|8000||httpbin.foo.svc.cluster.local');
      expect(clusters).toContain('PassthroughCluster');
      stream.send({ type_url: CLUSTER_TYPE, version_info: cds.version_info, response_nonce: cds.nonce, resource_names: [] });
      stream.send({ type_url: ENDPOINT_TYPE, resource_names: ['outbound|8000||httpbin.foo.svc.cluster.local'] });
      const eds = await nextOfType(stream, ENDPOINT_TYPE);
      expect(JSON.stringify(decoded(eds))).toContain('127.0.1.10');
      stream.send({
        type_url: ENDPOINT_TYPE,
        version_info: eds.version_info,
        response_nonce: eds.nonce,
        resource_names: ['outbound|8000||httpbin.foo.svc.cluster.local'],
      });
      stream.send({ type_url: ROUTE_TYPE, resource_names: ['8000'] });
      const rds = await nextOfType(stream, ROUTE_TYPE);
      expect(JSON.stringify(decoded(rds))).toContain('httpbin.foo.svc.cluster.local');
      stream.send({ type_url: ROUTE_TYPE, version_info: rds.version_info, response_nonce: rds.nonce, resource_names: ['8000'] });

      writeFileSync(
        join(workDir, 'config', 'second-httpbin.yaml'),
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: httpbin-foo-2\n  namespace: foo\n  labels: { app: httpbin, version: v1 }\nspec:\n  serviceAccountName: httpbin\n  containers: [{ name: httpbin, ports: [{ containerPort: 8080 }] }]\nstatus: { podIP: 127.0.1.11 }\n',
      );
      const pushed = await waitFor(
        async () => {
          const response = await stream.next(5000);
          return response.type_url === ENDPOINT_TYPE && JSON.stringify(decoded(response)).includes('127.0.1.11') ? response : undefined;
        },
        { timeoutMs: 10_000, description: 'the new endpoint over EDS' },
      );
      expect(pushed.type_url).toBe(ENDPOINT_TYPE);
    } finally {
      stream.cancel();
    }
  });

  test("over TLS with a token of the proxy's own identity; another namespace's token is refused", async () => {
    const good = secureStream(await issuer.sign('system:serviceaccount:foo:sleep'));
    try {
      good.stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await good.stream.next(5000)).resources.length).toBeGreaterThan(0);
    } finally {
      good.stream.cancel();
      good.client.close();
    }
    const wrong = secureStream(await issuer.sign('system:serviceaccount:bar:sleep'));
    try {
      wrong.stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await wrong.stream.status).code).toBe(7);
    } finally {
      wrong.client.close();
    }
    const none = secureStream();
    try {
      none.stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await none.stream.status).code).toBe(16);
    } finally {
      none.client.close();
    }
  });

  test('over TLS with a client certificate: one of the mesh CA is served, a self-signed one claiming the same identity is refused', async () => {
    const certs = join(workDir, 'client-certs');
    mkdirSync(certs, { recursive: true });
    const identity = 'URI:spiffe://cluster.local/ns/foo/sa/sleep';
    const meshRoot = { keyFile: join(workDir, 'var/lib/mesh/ca/ca-key.pem'), certFile: join(workDir, 'var/lib/mesh/ca/ca-cert.pem') };
    const [genuine, forged] = await Promise.all([signedCertificate(certs, 'genuine', identity, meshRoot), selfSignedCertificate(certs, 'forged', identity)]);
    const good = secureStream(undefined, genuine);
    try {
      good.stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await good.stream.next(5000)).resources.length).toBeGreaterThan(0);
    } finally {
      good.stream.cancel();
      good.client.close();
    }
    const bad = secureStream(undefined, forged);
    try {
      bad.stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      expect((await bad.stream.status).code).toBe(16);
    } finally {
      bad.client.close();
    }
  });

  test('debug information is refused on the plain-text port: syncz and config dumps need an authenticated stream', async () => {
    for (const [type, names] of [
      [DEBUG_SYNCZ_TYPE, []],
      [DEBUG_TYPE, ['config_dump?proxyID=sleep-foo.foo']],
    ] as const) {
      const stream = plain.sotw();
      stream.send({ node: sleepFoo(), type_url: type, resource_names: [...names] });
      expect(await stream.status).toMatchObject({ code: 16, details: expect.stringContaining('authentication required') });
    }
  });

  test('debug endpoints on the HTTP and monitoring ports; pushes counted', async () => {
    const stream = plain.sotw();
    try {
      stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
      await stream.next(5000);
      for (const port of [ports.http, ports.monitoring]) {
        const base = `http://127.0.0.1:${port}`;
        const syncz = (await (await fetch(`${base}/debug/syncz`)).json()) as unknown[];
        expect(JSON.stringify(syncz)).toContain('sleep-foo.foo');
        const dump = await fetch(`${base}/debug/config_dump?proxyID=sleep-foo.foo`);
        expect(dump.status).toBe(200);
        expect(await dump.text()).toContain('outbound|8000||httpbin.foo.svc.cluster.local');
        const endpointz = (await (await fetch(`${base}/debug/endpointz`)).json()) as { service: string }[];
        expect(endpointz.map((entry) => entry.service)).toContain('httpbin.bar.svc.cluster.local');
        expect((await fetch(`${base}/debug/push_status`)).status).toBe(200);
        expect((await fetch(`${base}/debug/adsz`)).status).toBe(200);
        // Without --profile there are no profiles to take.
        expect((await fetch(`${base}/debug/pprof/heap`)).status).toBe(404);
      }
      const metrics = await (await fetch(`http://127.0.0.1:${ports.monitoring}/metrics`)).text();
      expect(metrics).toMatch(/pilot_xds_pushes\{type="cds"\} [1-9]/);
      expect(metrics).toMatch(/pilot_xds\{[^}]*\} [1-9]/);
      expect(metrics).toMatch(/pilot_services 3/);
      expect(metrics).toMatch(/pilot_virt_services 1/);
    } finally {
      stream.cancel();
    }
  });
});

describe("admission of new streams (last: it uses up the daemon's turns for about a second)", () => {
  test('a storm of new streams is admitted at the reference rate; the rest are refused with RESOURCE_EXHAUSTED at once', async () => {
    const perSecond = Math.min(15 + 5 * availableParallelism(), 100);
    const startedAt = performance.now();
    const storm = Array.from({ length: 150 }, () => plain.sotw());
    try {
      const outcomes = await Promise.all(
        storm.map(async (stream) => {
          stream.send({ node: sleepFoo(), type_url: CLUSTER_TYPE, resource_names: [] });
          // A served stream's first answer may be slow on a loaded machine; the outcome, not its speed, is checked.
          return Promise.race([stream.next(20_000).then(() => 'served'), stream.status.then((end) => (end.code === 8 ? 'refused' : `ended ${end.code}`))]);
        }),
      );
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      const served = outcomes.filter((outcome) => outcome === 'served').length;
      const refused = outcomes.filter((outcome) => outcome === 'refused').length;
      expect(served + refused).toBe(150);
      // One turn at once, then one per interval while the storm lasted (about a second; longer when
      // the machine is loaded and the daemon takes the streams in more slowly).
      expect(served).toBeGreaterThanOrEqual(1);
      expect(served).toBeLessThanOrEqual(2 + Math.ceil(perSecond * Math.max(1, elapsedSeconds)));
      expect(refused).toBeGreaterThan(0);
    } finally {
      for (const stream of storm) stream.cancel();
    }
  }, 60_000);
});
