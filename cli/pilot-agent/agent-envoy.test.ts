import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTokenIssuer, type TokenIssuer } from '../../e2e/local-mesh/token-issuer.js';
import { fakeEnvoyRuns, writeFakeEnvoy } from '../../testing/fake-envoy.js';
import { collect, startBin, type BinResult } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';
import { processEnvironment } from '../../runtime/index.js';

// With an `envoy` binary on the path the built agent supervises it instead of running the
// embedded data plane: Envoy gets the bootstrap the agent wrote, readiness follows Envoy's admin
// API, and SIGTERM drains Envoy's listeners before ending it. A fake `envoy` stands in (no Envoy
// binary exists on these machines).
const AGENT_IP = '127.0.93.1';

let issuer: TokenIssuer;
let daemon: ChildProcess;
let daemonExit: Promise<BinResult>;
let agent: ChildProcess;
let agentExit: Promise<BinResult>;
let work: string;
let fakeDir: string;
let pod: string;
const runs = (): ReturnType<typeof fakeEnvoyRuns> =>
  existsSync(join(fakeDir, 'runs.log')) ? fakeEnvoyRuns(readFileSync(join(fakeDir, 'runs.log'), 'utf8')) : [];
const readiness = async (): Promise<number> => (await fetch(`http://${AGENT_IP}:15021/healthz/ready`)).status;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'agent-envoy-'));
  fakeDir = join(work, 'bin');
  mkdirSync(fakeDir);
  writeFakeEnvoy(fakeDir);
  issuer = await startTokenIssuer();
  const [securePort, httpPort] = await Promise.all([freePort(), freePort()]);
  const config = join(work, 'daemon/config');
  mkdirSync(config, { recursive: true });
  daemon = startBin(
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
    { JWT_RULE: issuer.jwtRule },
    join(work, 'daemon'),
  );
  daemonExit = collect(daemon, 60_000);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the daemon' });

  pod = join(work, 'pod');
  mkdirSync(join(pod, 'var/run/secrets/tokens'), { recursive: true });
  mkdirSync(join(pod, 'var/run/secrets/mesh'), { recursive: true });
  writeFileSync(join(pod, 'var/run/secrets/tokens/mesh-token'), await issuer.workloadToken('foo', 'sleep'));
  writeFileSync(join(pod, 'var/run/secrets/mesh/root-cert.pem'), readFileSync(join(work, 'daemon/var/lib/mesh/ca/root-cert.pem')));
  agent = startBin(
    'pilot-agent',
    ['proxy', 'sidecar', '--concurrency', '2'],
    {
      PATH: `${fakeDir}:${processEnvironment()['PATH'] ?? ''}`,
      INSTANCE_IP: AGENT_IP,
      POD_NAMESPACE: 'foo',
      SERVICE_ACCOUNT: 'sleep',
      ECC_SIGNATURE_ALGORITHM: 'ECDSA',
      PROXY_CONFIG: JSON.stringify({ discoveryAddress: `127.0.0.1:${securePort}`, terminationDrainDuration: '1ms', proxyMetadata: { POD_NAME: 'sleep-1' } }),
    },
    pod,
  );
  agentExit = collect(agent, 60_000);
}, 60_000);

afterAll(async () => {
  for (const child of [agent, daemon]) if (child?.exitCode === null) child.kill('SIGTERM');
  await Promise.all([agentExit, daemonExit].map((exit) => exit?.catch(() => undefined)));
  await issuer?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the agent with an envoy binary on the path', () => {
  test('starts Envoy on the bootstrap it wrote', async () => {
    await waitFor(() => runs().length === 1, { timeoutMs: 15_000, description: 'envoy started' });
    const args = runs()[0]?.args ?? [];
    expect(args.slice(0, 2)).toEqual(['-c', join(pod, 'etc/mesh/proxy/envoy-rev.json')]);
    expect(args).toEqual(expect.arrayContaining(['--concurrency', '2', '--disable-hot-restart']));
    const bootstrap = JSON.parse(readFileSync(join(pod, 'etc/mesh/proxy/envoy-rev.json'), 'utf8')) as { node: { id: string } };
    expect(bootstrap.node.id).toBe(`sidecar~${AGENT_IP}~sleep-1.foo~foo.svc.cluster.local`);
  });

  test('is ready only once Envoy accepted its first listeners and clusters', async () => {
    await waitFor(
      async () => {
        const response = await fetch(`http://${AGENT_IP}:15021/healthz/ready`);
        return response.status === 503 && /update_success is 0/.test(await response.text());
      },
      { timeoutMs: 15_000, description: 'certificate held, Envoy live without config' },
    );
    writeFileSync(join(fakeDir, 'synced'), '');
    await waitFor(async () => (await readiness()) === 200, { timeoutMs: 5_000, description: 'ready' });
  });

  test('SIGTERM drains Envoy, ends it and exits', async () => {
    agent.kill('SIGTERM');
    const result = await agentExit;
    expect(result).toMatchObject({ code: 0 });
    expect(readFileSync(join(fakeDir, 'drains.log'), 'utf8').trim()).toBe('/drain_listeners?inboundonly&graceful');
    expect(runs().some((run) => run.terminated)).toBe(true);
  });
});
