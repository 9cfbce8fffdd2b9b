import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTokenIssuer, type TokenIssuer } from '../../e2e/local-mesh/token-issuer.js';
import { certificateAuthority, intermediateAuthority, type KeyAndCert } from '../../testing/openssl.js';
import { collect, PROJECT_ROOT, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';

// A plugged CA moving to a new root, as operators do it: the combined bundle first, then the new
// intermediate under the new root, then the old root dropped. The built daemon restarts with each
// step (it reads plugged certificates at start); the built agent must reconnect every time, which
// needs it to follow the trust bundle (here the mounted root file, updated as the published root
// ConfigMap would be) instead of the root it read at start.
const POD_IP = '127.0.95.40';

let dir: string;
let issuer: TokenIssuer;
let daemon: ChildProcess | undefined;
let daemonExit: Promise<unknown> | undefined;
let agent: ChildProcess;
let agentExit: Promise<unknown>;
let ports: { grpc: number; secure: number; http: number };
let rootA: KeyAndCert;
let rootB: KeyAndCert;
let intermediateA: KeyAndCert;
let intermediateB: KeyAndCert;

const pem = (cert: KeyAndCert): string => readFileSync(cert.certFile, 'utf8');
const podDir = (): string => join(dir, 'pod');

/** Writes the daemon's plugged CA folder: the signing intermediate, its chain, and the trust bundle. */
function plug(intermediate: KeyAndCert, issuerRoot: KeyAndCert, bundle: readonly KeyAndCert[]): void {
  const cacerts = join(dir, 'daemon', 'etc', 'cacerts');
  mkdirSync(cacerts, { recursive: true });
  writeFileSync(join(cacerts, 'ca-cert.pem'), pem(intermediate));
  cpSync(intermediate.keyFile, join(cacerts, 'ca-key.pem'));
  writeFileSync(join(cacerts, 'cert-chain.pem'), pem(intermediate) + pem(issuerRoot));
  writeFileSync(join(cacerts, 'root-cert.pem'), bundle.map(pem).join(''));
}

/** What the kubelet does when the published root ConfigMap changes: the mounted file follows. */
function publishRoots(bundle: readonly KeyAndCert[]): void {
  writeFileSync(join(podDir(), 'var/run/secrets/mesh/root-cert.pem'), bundle.map(pem).join(''));
}

async function startDaemon(): Promise<void> {
  daemon = startBin(
    'pilot-discovery',
    [
      'discovery',
      '--configDir',
      join(dir, 'config'),
      '--grpcAddr',
      `127.0.0.1:${ports.grpc}`,
      '--secureGRPCAddr',
      `127.0.0.1:${ports.secure}`,
      '--httpAddr',
      `127.0.0.1:${ports.http}`,
      '--monitoringAddr',
      '127.0.0.1:0',
      '--httpsAddr',
      '127.0.0.1:0',
      '--ctrlz_port',
      '0',
    ],
    { JWT_RULE: issuer.jwtRule, PILOT_DEBOUNCE_AFTER: '20ms' },
    join(dir, 'daemon'),
  );
  daemonExit = collect(daemon, 120_000);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`)).status === 200, { timeoutMs: 20_000, description: 'the daemon ready' });
}

async function stopDaemon(): Promise<void> {
  if (daemon?.exitCode === null) daemon.kill('SIGTERM');
  await daemonExit?.catch(() => undefined);
  daemon = undefined;
}

/** The agent's stream as the daemon sees it: connected, with clusters and listeners acknowledged. */
async function agentSynced(): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${ports.http}/debug/syncz`).catch(() => undefined);
  if (response?.status !== 200) return false;
  const proxies = (await response.json()) as { proxy: string; types: { type: string; status: string }[] }[];
  const ours = proxies.find((entry) => entry.proxy === 'rotating-1.foo');
  return ['cds', 'lds'].every((type) => ours?.types.some((t) => t.type === type && t.status === 'SYNCED'));
}

/** A fresh certificate through the agent's CA connection: its issuer says which intermediate signed it. */
async function issuedBy(intermediate: KeyAndCert): Promise<boolean> {
  const chain = readFileSync(join(podDir(), 'certs', 'cert-chain.pem'), 'utf8');
  return new X509Certificate(chain).checkIssued(new X509Certificate(pem(intermediate)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'root-rotation-'));
  const certs = join(dir, 'certs');
  mkdirSync(certs, { recursive: true });
  [rootA, rootB] = await Promise.all([certificateAuthority(certs, 'root-a'), certificateAuthority(certs, 'root-b')]);
  [intermediateA, intermediateB] = await Promise.all([
    intermediateAuthority(certs, 'intermediate-a', rootA),
    intermediateAuthority(certs, 'intermediate-b', rootB),
  ]);
  issuer = await startTokenIssuer();
  ports = { grpc: await freePort(), secure: await freePort(), http: await freePort() };
  cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), join(dir, 'config'), { recursive: true });
  writeFileSync(
    join(dir, 'config', 'rotating.yaml'),
    `apiVersion: v1\nkind: Pod\nmetadata: { name: rotating-1, namespace: foo, labels: { app: rotating, security.mesh.io/tlsMode: mesh } }\nspec: { serviceAccountName: rotating, containers: [{ name: app }] }\nstatus: { podIP: ${POD_IP} }\n`,
  );

  plug(intermediateA, rootA, [rootA]);
  await startDaemon();
  mkdirSync(join(podDir(), 'var/run/secrets/tokens'), { recursive: true });
  mkdirSync(join(podDir(), 'var/run/secrets/mesh'), { recursive: true });
  writeFileSync(join(podDir(), 'var/run/secrets/tokens/mesh-token'), await issuer.workloadToken('foo', 'rotating'));
  publishRoots([rootA]);
  agent = startBin(
    'pilot-agent',
    ['proxy', 'sidecar'],
    {
      INSTANCE_IP: POD_IP,
      POD_NAMESPACE: 'foo',
      SERVICE_ACCOUNT: 'rotating',
      ECC_SIGNATURE_ALGORITHM: 'ECDSA',
      OUTPUT_CERTS: join(podDir(), 'certs'),
      // Short-lived certificates: renewals during the test go through the CA connection too.
      SECRET_TTL: '4s',
      // No drain when the suite ends the agent: the product's 5 s would only hold afterAll.
      PROXY_CONFIG: JSON.stringify({
        discoveryAddress: `127.0.0.1:${ports.secure}`,
        terminationDrainDuration: '1ms',
        proxyMetadata: { POD_NAME: 'rotating-1' },
      }),
    },
    podDir(),
  );
  agentExit = collect(agent, 180_000);
}, 60_000);

afterAll(async () => {
  if (agent?.exitCode === null) agent.kill('SIGTERM');
  await agentExit?.catch(() => undefined);
  await stopDaemon();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the agent through a plugged CA root rotation, the daemon restarted at each step', () => {
  test('step 1, root A: connected, certificates from intermediate A', async () => {
    await waitFor(agentSynced, { timeoutMs: 20_000, description: 'the agent synced' });
    await waitFor(() => issuedBy(intermediateA), { timeoutMs: 10_000, description: 'a certificate of intermediate A' });
  });

  test('step 2, the combined bundle A+B: the agent reconnects', async () => {
    await stopDaemon();
    plug(intermediateA, rootA, [rootA, rootB]);
    publishRoots([rootA, rootB]);
    await startDaemon();
    await waitFor(agentSynced, { timeoutMs: 20_000, description: 'the agent synced again' });
  });

  test('step 3, the new intermediate under root B: the agent reconnects to a daemon whose certificate chains to B, and renews from intermediate B', async () => {
    await stopDaemon();
    plug(intermediateB, rootB, [rootA, rootB]);
    await startDaemon();
    await waitFor(agentSynced, { timeoutMs: 30_000, description: 'the agent synced with the daemon of root B' });
    await waitFor(() => issuedBy(intermediateB), { timeoutMs: 20_000, description: 'a certificate of intermediate B' });
  });

  test('step 4, root A dropped: the agent reconnects and keeps renewing', async () => {
    await stopDaemon();
    plug(intermediateB, rootB, [rootB]);
    publishRoots([rootB]);
    await startDaemon();
    await waitFor(agentSynced, { timeoutMs: 30_000, description: 'the agent synced after the old root was dropped' });
    const before = readFileSync(join(podDir(), 'certs', 'cert-chain.pem'), 'utf8');
    await waitFor(() => readFileSync(join(podDir(), 'certs', 'cert-chain.pem'), 'utf8') !== before, {
      timeoutMs: 20_000,
      description: 'a renewal after the drop',
    });
    expect(await issuedBy(intermediateB)).toBe(true);
  });
});
