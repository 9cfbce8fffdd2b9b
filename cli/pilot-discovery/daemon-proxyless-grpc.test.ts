import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Server,
  ServerCredentials,
  credentials,
  makeGenericClientConstructor,
  type Client,
  type ServiceError,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { collect, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { ECHO_SERVICE as ECHO } from '../../testing/echo-service.js';

// A real third-party xDS client: @grpc/grpc-js-xds resolves xds:/// targets through the built
// daemon, which reads Services and Pods for gRPC backends the test starts from its config folder.
const BOOTSTRAP_KEY = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';
const BACKENDS = [
  { id: 'a', ip: '127.0.81.1', version: 'v1' },
  { id: 'b', ip: '127.0.81.2', version: 'v2' },
];

type EchoClient = Client & { Echo: (request: Buffer, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Buffer) => void) => void };

let daemon: ChildProcess;
let exited: Promise<unknown>;
let workDir: string;
let grpcPort: number;
let httpPort: number;
let echoPort: number;
const servers: Server[] = [];
let client: EchoClient;

function serve(id: string): Server {
  const server = new Server();
  server.addService(ECHO, {
    Echo: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done(null, Buffer.concat([Buffer.from(`${id}:`), call.request])),
  });
  return server;
}

function bootstrap(node: string): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: `127.0.0.1:${grpcPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id: node, locality: { region: 'r', zone: 'z' }, metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' } },
    server_listener_resource_name_template: 'xds.mesh.io/grpc/lds/inbound/%s',
  });
}

function echo(text: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.Echo(Buffer.from(text), { deadline: new Date(Date.now() + 3000) }, (error, response) => (error ? reject(error) : resolve(String(response)))),
  );
}

const pod = (backend: (typeof BACKENDS)[number]): string =>
  `apiVersion: v1\nkind: Pod\nmetadata: { name: echo-${backend.id}, namespace: default, labels: { app: echo, version: ${backend.version} } }\nspec: { serviceAccountName: echo, containers: [{ name: echo, ports: [{ containerPort: ${echoPort} }] }] }\nstatus: { podIP: ${backend.ip} }\n`;

beforeAll(async () => {
  [grpcPort, httpPort, echoPort] = await Promise.all([freePort(), freePort(), freePort()]);
  for (const backend of BACKENDS) {
    const server = serve(backend.id);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`${backend.ip}:${echoPort}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
    );
    servers.push(server);
  }
  workDir = mkdtempSync(join(tmpdir(), 'proxyless-'));
  const config = join(workDir, 'config');
  mkdirSync(config, { recursive: true });
  writeFileSync(
    join(config, 'echo.yaml'),
    `apiVersion: v1\nkind: Service\nmetadata: { name: echo, namespace: default }\nspec: { clusterIP: 10.96.7.7, selector: { app: echo }, ports: [{ name: grpc, port: 7070, targetPort: ${echoPort} }] }\n---\n${pod(BACKENDS[0] as (typeof BACKENDS)[number])}`,
  );
  daemon = startBin(
    'pilot-discovery',
    [
      'discovery',
      '--configDir',
      config,
      '--grpcAddr',
      `127.0.0.1:${grpcPort}`,
      '--secureGRPCAddr',
      '127.0.0.1:0',
      '--httpAddr',
      `127.0.0.1:${httpPort}`,
      '--monitoringAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--ctrlz_port',
      '0',
    ],
    { PILOT_DEBOUNCE_AFTER: '20ms' },
    workDir,
  );
  exited = collect(daemon, 60_000);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the daemon' });
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  const Echo = makeGenericClientConstructor(ECHO, 'Echo');
  client = new Echo('xds:///echo.default.svc.cluster.local:7070', credentials.createInsecure(), {
    [BOOTSTRAP_KEY]: bootstrap('sidecar~127.0.81.9~echo-client.default~default.svc.cluster.local'),
  }) as unknown as EchoClient;
});

afterAll(async () => {
  client?.close();
  for (const server of servers) server.forceShutdown();
  if (daemon?.exitCode === null) daemon.kill('SIGTERM');
  await exited?.catch(() => undefined);
  rmSync(workDir, { recursive: true, force: true });
});

describe('@grpc/grpc-js-xds through the daemon', () => {
  test('resolves xds:///echo.default.svc.cluster.local:7070 and reaches the backend', async () => {
    await waitFor(async () => (await echo('hi').catch(() => '')) === 'a:hi', { timeoutMs: 10_000, description: 'an RPC through xDS' });
  });

  test('follows an endpoint change', async () => {
    writeFileSync(join(workDir, 'config', 'echo-b.yaml'), pod(BACKENDS[1] as (typeof BACKENDS)[number]));
    const seen = new Set<string>();
    await waitFor(
      async () => {
        seen.add((await echo('x')).split(':')[0] ?? '');
        return seen.has('b');
      },
      { timeoutMs: 10_000, description: 'RPCs reaching the new endpoint' },
    );
  });

  test('follows a weighted route', async () => {
    const route = (v1: number, v2: number): string =>
      `apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: echo, namespace: default }\nspec:\n  host: echo\n  subsets: [{ name: v1, labels: { version: v1 } }, { name: v2, labels: { version: v2 } }]\n---\napiVersion: networking.mesh.io/v1alpha3\nkind: VirtualService\nmetadata: { name: echo, namespace: default }\nspec:\n  hosts: [echo.default.svc.cluster.local]\n  http:\n    - route:\n        - { destination: { host: echo.default.svc.cluster.local, subset: v1 }, weight: ${v1} }\n        - { destination: { host: echo.default.svc.cluster.local, subset: v2 }, weight: ${v2} }\n`;
    writeFileSync(join(workDir, 'config', 'route.yaml'), route(0, 100));
    await waitFor(
      async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => echo('w')));
        return answers.every((answer) => answer.startsWith('b:'));
      },
      { timeoutMs: 10_000, description: 'all RPCs on v2' },
    );
    writeFileSync(join(workDir, 'config', 'route.yaml'), route(100, 0));
    await waitFor(
      async () => {
        const answers = await Promise.all(Array.from({ length: 10 }, () => echo('w')));
        return answers.every((answer) => answer.startsWith('a:'));
      },
      { timeoutMs: 10_000, description: 'all RPCs on v1' },
    );
  });

  test('an XdsServer receives its listener and serves', async () => {
    const xds = await import('@grpc/grpc-js-xds');
    const port = await freePort();
    const server = new xds.XdsServer({ [BOOTSTRAP_KEY]: bootstrap('sidecar~127.0.81.3~echo-server.default~default.svc.cluster.local') } as never);
    server.addService(ECHO, {
      Echo: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done(null, Buffer.concat([Buffer.from('xds-server:'), call.request])),
    });
    try {
      await new Promise<void>((resolve, reject) =>
        server.bindAsync(`127.0.81.3:${port}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
      );
      const Echo = makeGenericClientConstructor(ECHO, 'Echo');
      const direct = new Echo(`127.0.81.3:${port}`, credentials.createInsecure()) as unknown as EchoClient;
      const answer = await new Promise<string>((resolve, reject) =>
        direct.Echo(Buffer.from('ok'), { deadline: new Date(Date.now() + 3000) }, (error, response) => (error ? reject(error) : resolve(String(response)))),
      );
      direct.close();
      expect(answer).toBe('xds-server:ok');
    } finally {
      server.forceShutdown();
    }
  });
});
