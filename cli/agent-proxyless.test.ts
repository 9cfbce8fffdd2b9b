import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, credentials, makeGenericClientConstructor, type Client, type ServiceError, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTokenIssuer, type TokenIssuer } from '../e2e/local-mesh/token-issuer.js';
import { collect, startBin } from '../testing/run-bin.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { ECHO_SERVICE as ECHO } from '../testing/echo-service.js';

// A proxyless gRPC application on the agent's bootstrap: the built agent (GENERATOR=grpc) gets a
// certificate, writes the gRPC bootstrap and proxies xDS to the built daemon over TLS with its
// token; @grpc/grpc-js-xds reads that bootstrap and reaches a backend the daemon knows.
const BACKEND_IP = '127.0.91.1';

let issuer: TokenIssuer;
let daemon: ChildProcess;
let agent: ChildProcess;
const exits: Promise<unknown>[] = [];
let work: string;
let backend: Server;
let client: Client & { Echo: (request: Buffer, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Buffer) => void) => void };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'proxyless-agent-'));
  issuer = await startTokenIssuer();
  const [securePort, httpPort, echoPort] = await Promise.all([freePort(), freePort(), freePort()]);
  backend = new Server();
  backend.addService(ECHO, { Echo: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done(null, Buffer.concat([Buffer.from('echo:'), call.request])) });
  await new Promise<void>((resolve, reject) => backend.bindAsync(`${BACKEND_IP}:${echoPort}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
  const config = join(work, 'daemon/config');
  mkdirSync(config, { recursive: true });
  writeFileSync(
    join(config, 'echo.yaml'),
    `apiVersion: v1\nkind: Service\nmetadata: { name: echo, namespace: default }\nspec: { clusterIP: 10.96.9.9, selector: { app: echo }, ports: [{ name: grpc, port: 7070, targetPort: ${echoPort} }] }\n---\napiVersion: v1\nkind: Pod\nmetadata: { name: echo-1, namespace: default, labels: { app: echo } }\nspec: { serviceAccountName: echo, containers: [{ name: echo, ports: [{ containerPort: ${echoPort} }] }] }\nstatus: { podIP: ${BACKEND_IP} }\n`,
  );
  daemon = startBin(
    'pilot-discovery',
    ['discovery', '--configDir', config, '--grpcAddr', '127.0.0.1:0', '--secureGRPCAddr', `127.0.0.1:${securePort}`, '--httpAddr', `127.0.0.1:${httpPort}`, '--monitoringAddr', '127.0.0.1:0', '--ctrlz_port', '0'],
    { JWT_RULE: issuer.jwtRule, PILOT_DEBOUNCE_AFTER: '20ms' },
    join(work, 'daemon'),
  );
  exits.push(collect(daemon, 60_000));
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the daemon' });

  const pod = join(work, 'app');
  mkdirSync(join(pod, 'var/run/secrets/tokens'), { recursive: true });
  mkdirSync(join(pod, 'var/run/secrets/mesh'), { recursive: true });
  writeFileSync(join(pod, 'var/run/secrets/tokens/mesh-token'), await issuer.workloadToken('default', 'client'));
  writeFileSync(join(pod, 'var/run/secrets/mesh/root-cert.pem'), readFileSync(join(work, 'daemon/var/lib/mesh/ca/root-cert.pem')));
  agent = startBin(
    'pilot-agent',
    ['proxy', 'sidecar'],
    {
      INSTANCE_IP: '127.0.91.9',
      POD_NAMESPACE: 'default',
      SERVICE_ACCOUNT: 'client',
      ECC_SIGNATURE_ALGORITHM: 'ECDSA',
      PROXY_CONFIG: JSON.stringify({ discoveryAddress: `127.0.0.1:${securePort}`, proxyMetadata: { GENERATOR: 'grpc', POD_NAME: 'client-1' } }),
    },
    pod,
  );
  exits.push(collect(agent, 60_000));
  const bootstrapFile = join(pod, 'etc/mesh/proxy/grpc-bootstrap.json');
  await waitFor(() => existsSync(bootstrapFile) && existsSync(join(pod, 'etc/mesh/proxy/cert-chain.pem')), { timeoutMs: 15_000, description: 'the gRPC bootstrap and the certificates' });
  await waitFor(async () => (await fetch('http://127.0.91.9:15021/healthz/ready')).status === 200, { timeoutMs: 15_000, description: 'the agent ready' });
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  const Echo = makeGenericClientConstructor(ECHO, 'Echo');
  client = new Echo('xds:///echo.default.svc.cluster.local:7070', credentials.createInsecure(), {
    'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': readFileSync(bootstrapFile, 'utf8'),
  }) as unknown as typeof client;
}, 60_000);

afterAll(async () => {
  client?.close();
  backend?.forceShutdown();
  for (const child of [agent, daemon]) if (child?.exitCode === null) child.kill('SIGTERM');
  await Promise.all(exits.map((exit) => exit.catch(() => undefined)));
  await issuer?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('a proxyless gRPC application through the agent', () => {
  test('resolves its target through the agent xDS proxy and calls the backend', async () => {
    const call = (): Promise<string> =>
      new Promise((resolve, reject) => client.Echo(Buffer.from('hi'), { deadline: new Date(Date.now() + 3000) }, (error, response) => (error ? reject(error) : resolve(String(response)))));
    await waitFor(async () => (await call().catch(() => '')) === 'echo:hi', { timeoutMs: 15_000, description: 'an RPC on the agent bootstrap' });
  });
});
