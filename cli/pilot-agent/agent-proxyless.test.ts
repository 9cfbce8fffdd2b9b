import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  status,
  type ChannelCredentials,
  type Client,
  type ServiceError,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTokenIssuer, type TokenIssuer } from '../../e2e/local-mesh/token-issuer.js';
import { collect, PROJECT_ROOT, startBin } from '../../testing/run-bin.js';
import { selfSignedCertificate, signedCertificate, type KeyAndCert } from '../../testing/openssl.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { ECHO_SERVICE as ECHO } from '../../testing/echo-service.js';
import { loadEnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { newAdsTestClient } from '../../xds/testing/test-support.js';
import { DEBUG_TYPE, LISTENER_TYPE } from '../../xds/envoy/type-urls.js';
import { processEnvironment } from '../../runtime/index.js';

// Proxyless gRPC applications on the agent's bootstrap: each built agent (GENERATOR=grpc) gets a
// certificate, writes the gRPC bootstrap and proxies xDS to the built daemon over TLS with its
// token. A client in this process reaches a plain backend, and a meshed server application
// (a child process with an XdsServer) under STRICT mutual TLS and a DENY policy on one method.
const BACKEND_IP = '127.0.91.1';
const CLIENT_IP = '127.0.91.9';
const SERVER_IP = '127.0.91.2';

type EchoClient = Client &
  Record<'Echo' | 'Admin', (request: Buffer, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Buffer) => void) => void>;

let issuer: TokenIssuer;
const children: ChildProcess[] = [];
const exits: Promise<unknown>[] = [];
let work: string;
let securePort: number;
let backend: Server;
let serverPort: number;
let clientBootstrap: string;
const clients: Client[] = [];

function start(child: ChildProcess): ChildProcess {
  children.push(child);
  exits.push(collect(child, 120_000));
  return child;
}

/** A pod folder with its token and the mesh root, and the built agent in proxyless mode; resolves once it is ready. */
async function startProxylessAgent(name: string, namespace: string, serviceAccount: string, ip: string): Promise<string> {
  const pod = join(work, name);
  mkdirSync(join(pod, 'var/run/secrets/tokens'), { recursive: true });
  mkdirSync(join(pod, 'var/run/secrets/mesh'), { recursive: true });
  writeFileSync(join(pod, 'var/run/secrets/tokens/mesh-token'), await issuer.workloadToken(namespace, serviceAccount));
  writeFileSync(join(pod, 'var/run/secrets/mesh/root-cert.pem'), readFileSync(join(work, 'daemon/var/lib/mesh/ca/root-cert.pem')));
  start(
    startBin(
      'pilot-agent',
      ['proxy', 'sidecar'],
      {
        INSTANCE_IP: ip,
        POD_NAMESPACE: namespace,
        SERVICE_ACCOUNT: serviceAccount,
        ECC_SIGNATURE_ALGORITHM: 'ECDSA',
        PROXY_CONFIG: JSON.stringify({ discoveryAddress: `127.0.0.1:${securePort}`, proxyMetadata: { MESH_META_GENERATOR: 'grpc', POD_NAME: name } }),
      },
      pod,
    ),
  );
  const bootstrapFile = join(pod, 'etc/mesh/proxy/grpc-bootstrap.json');
  await waitFor(() => existsSync(bootstrapFile) && existsSync(join(pod, 'etc/mesh/proxy/cert-chain.pem')), {
    timeoutMs: 15_000,
    description: `the gRPC bootstrap and certificates of ${name}`,
  });
  await waitFor(async () => (await fetch(`http://${ip}:15021/healthz/ready`)).status === 200, { timeoutMs: 15_000, description: `the agent of ${name} ready` });
  return bootstrapFile;
}

function echoClient(target: string, channelCredentials: ChannelCredentials, bootstrapFile?: string): EchoClient {
  const Echo = makeGenericClientConstructor(ECHO, 'Echo');
  const client = new Echo(
    target,
    channelCredentials,
    bootstrapFile ? { 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': readFileSync(bootstrapFile, 'utf8') } : {},
  ) as unknown as EchoClient;
  clients.push(client);
  return client;
}

function call(client: EchoClient, method: 'Echo' | 'Admin', text: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client[method](Buffer.from(text), { deadline: new Date(Date.now() + 3000) }, (error, response) => (error ? reject(error) : resolve(String(response)))),
  );
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'proxyless-agent-'));
  issuer = await startTokenIssuer();
  let echoPort: number;
  let httpPort: number;
  [securePort, httpPort, echoPort, serverPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  backend = new Server();
  backend.addService(ECHO, {
    Echo: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done(null, Buffer.concat([Buffer.from('echo:'), call.request])),
  });
  await new Promise<void>((resolve, reject) =>
    backend.bindAsync(`${BACKEND_IP}:${echoPort}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
  );
  const config = join(work, 'daemon/config');
  mkdirSync(config, { recursive: true });
  writeFileSync(
    join(config, 'echo.yaml'),
    `apiVersion: v1\nkind: Service\nmetadata: { name: echo, namespace: default }\nspec: { clusterIP: 10.96.9.9, selector: { app: echo }, ports: [{ name: grpc, port: 7070, targetPort: ${echoPort} }] }\n---\napiVersion: v1\nkind: Pod\nmetadata: { name: echo-1, namespace: default, labels: { app: echo } }\nspec: { serviceAccountName: echo, containers: [{ name: echo, ports: [{ containerPort: ${echoPort} }] }] }\nstatus: { podIP: ${BACKEND_IP} }\n`,
  );
  writeFileSync(
    join(config, 'greeter.yaml'),
    [
      `apiVersion: v1\nkind: Service\nmetadata: { name: greeter, namespace: grpc }\nspec: { clusterIP: 10.96.9.10, selector: { app: greeter }, ports: [{ name: grpc, port: 7070, targetPort: ${serverPort} }] }`,
      `apiVersion: v1\nkind: Pod\nmetadata: { name: greeter-1, namespace: grpc, labels: { app: greeter } }\nspec: { serviceAccountName: greeter, containers: [{ name: greeter, ports: [{ containerPort: ${serverPort} }] }] }\nstatus: { podIP: ${SERVER_IP} }`,
      'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: default, namespace: grpc }\nspec: { mtls: { mode: STRICT } }',
      'apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: greeter, namespace: grpc }\nspec: { host: greeter.grpc.svc.cluster.local, trafficPolicy: { tls: { mode: MESH_MUTUAL } } }',
      'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: no-admin, namespace: grpc }\nspec: { selector: { matchLabels: { app: greeter } }, action: DENY, rules: [{ to: [{ operation: { paths: ["/mesh.test.Echo/Admin"] } }] }] }',
    ].join('\n---\n'),
  );
  start(
    startBin(
      'pilot-discovery',
      [
        'discovery',
        '--configDir',
        config,
        '--grpcAddr',
        '127.0.0.1:0',
        '--secureGRPCAddr',
        `127.0.0.1:${securePort}`,
        '--httpAddr',
        `127.0.0.1:${httpPort}`,
        '--monitoringAddr',
        '127.0.0.1:0',
        '--httpsAddr',
        '127.0.0.1:0',
        '--ctrlz_port',
        '0',
      ],
      { JWT_RULE: issuer.jwtRule, PILOT_DEBOUNCE_AFTER: '20ms' },
      join(work, 'daemon'),
    ),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the daemon' });

  const [client, server] = await Promise.all([
    startProxylessAgent('client-1', 'default', 'client', CLIENT_IP),
    startProxylessAgent('greeter-1', 'grpc', 'greeter', SERVER_IP),
  ]);
  clientBootstrap = client;
  const app = start(
    spawn(
      process.execPath,
      ['--import', join(PROJECT_ROOT, 'testing/ts-register.mjs'), join(PROJECT_ROOT, 'testing/proxyless-echo-server.ts'), `${SERVER_IP}:${serverPort}`],
      {
        env: { ...processEnvironment(), GRPC_XDS_BOOTSTRAP: server, GRPC_XDS_EXPERIMENTAL_RBAC: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  let output = '';
  app.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => output.includes('serving'), { timeoutMs: 15_000, description: 'the meshed server application serving' });
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
}, 90_000);

afterAll(async () => {
  for (const client of clients) client.close();
  backend?.forceShutdown();
  for (const child of [...children].reverse()) if (child.exitCode === null) child.kill('SIGTERM');
  await Promise.all(exits.map((exit) => exit.catch(() => undefined)));
  await issuer?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('proxyless gRPC applications through the agent', () => {
  test('a client resolves its target through the agent xDS proxy and calls the backend', async () => {
    const client = echoClient('xds:///echo.default.svc.cluster.local:7070', credentials.createInsecure(), clientBootstrap);
    await waitFor(async () => (await call(client, 'Echo', 'hi').catch(() => '')) === 'echo:hi', {
      timeoutMs: 15_000,
      description: 'an RPC on the agent bootstrap',
    });
  });

  test('two meshed applications talk over mutual TLS with their agent certificates', async () => {
    const { XdsChannelCredentials } = await import('@grpc/grpc-js-xds');
    const client = echoClient('xds:///greeter.grpc.svc.cluster.local:7070', new XdsChannelCredentials(credentials.createInsecure()), clientBootstrap);
    await waitFor(async () => (await call(client, 'Echo', 'hi').catch(() => '')) !== '', { timeoutMs: 15_000, description: 'an RPC to the meshed server' });
    // The server saw the client's mesh identity: the call was mutual TLS with the workload certificate.
    expect(await call(client, 'Echo', 'hi')).toBe('echo:hi from spiffe://cluster.local/ns/default/sa/client');
  });

  test('a DENY policy on one method refuses it with PERMISSION_DENIED and leaves the other', async () => {
    const { XdsChannelCredentials } = await import('@grpc/grpc-js-xds');
    const client = echoClient('xds:///greeter.grpc.svc.cluster.local:7070', new XdsChannelCredentials(credentials.createInsecure()), clientBootstrap);
    await waitFor(async () => (await call(client, 'Echo', 'x').catch(() => '')) !== '', { timeoutMs: 15_000, description: 'an RPC to the meshed server' });
    await expect(call(client, 'Admin', 'x')).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  });

  test('a client without mesh certificates is refused by the STRICT server', async () => {
    const plain = echoClient(`${SERVER_IP}:${serverPort}`, credentials.createInsecure());
    await expect(call(plain, 'Echo', 'x')).rejects.toMatchObject({ code: status.UNAVAILABLE });
    // Through xDS but without the xDS credentials the client has no certificate either.
    const insecureXds = echoClient('xds:///greeter.grpc.svc.cluster.local:7070', credentials.createInsecure(), clientBootstrap);
    await expect(call(insecureXds, 'Echo', 'x')).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });
});

describe('the STRICT server application verifies client chains', () => {
  const claimed = 'URI:spiffe://cluster.local/ns/default/sa/client';
  const withCertificate = (cert: KeyAndCert): ChannelCredentials =>
    credentials.createSsl(readFileSync(join(work, 'daemon/var/lib/mesh/ca/root-cert.pem')), readFileSync(cert.keyFile), readFileSync(cert.certFile), {
      checkServerIdentity: () => undefined,
    });

  test('a self-signed certificate claiming a mesh identity is refused; one of the mesh CA is served as that identity', async () => {
    const certs = join(work, 'client-certs');
    mkdirSync(certs, { recursive: true });
    const forged = await selfSignedCertificate(certs, 'forged', claimed);
    const meshRoot = { keyFile: join(work, 'daemon/var/lib/mesh/ca/ca-key.pem'), certFile: join(work, 'daemon/var/lib/mesh/ca/ca-cert.pem') };
    const genuine = await signedCertificate(certs, 'genuine', claimed, meshRoot);
    const target = `${SERVER_IP}:${serverPort}`;
    await expect(call(echoClient(target, withCertificate(forged)), 'Echo', 'x')).rejects.toMatchObject({ code: status.UNAVAILABLE });
    expect(await call(echoClient(target, withCertificate(genuine)), 'Echo', 'x')).toBe('echo:x from spiffe://cluster.local/ns/default/sa/client');
  });
});

describe('the daemon debug API through the agent (PROXY_XDS_DEBUG_VIA_AGENT, port 15004)', () => {
  test('a tool in the pod reads its proxy config dump with no credential of its own; other types and other namespaces are refused', async () => {
    const debug = newAdsTestClient(loadEnvoyProtos(), 15004, CLIENT_IP);
    try {
      // No node and no token: the agent adds its node and its credential.
      const own = debug.sotw();
      own.send({ type_url: DEBUG_TYPE, resource_names: ['config_dump?proxyID=client-1.default'] });
      const dump = await own.next();
      expect(dump.type_url).toBe(DEBUG_TYPE);
      expect(String(dump.resources[0]?.value)).toMatch(/"dynamic_listeners":\[\{"name":"\w+\.\w+\.svc\.cluster\.local:7070"/);
      own.cancel();

      const listeners = debug.sotw();
      listeners.send({ type_url: LISTENER_TYPE });
      expect(await listeners.status).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringContaining(`not "${LISTENER_TYPE}"`) });

      const other = debug.sotw();
      other.send({ type_url: DEBUG_TYPE, resource_names: ['config_dump?proxyID=greeter-1.grpc'] });
      expect(await other.status).toMatchObject({ code: status.PERMISSION_DENIED });
    } finally {
      debug.close();
    }
  });
});
