import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { FaultControls } from '../apiserver-double/index.js';
import { curl } from '../testing/curl.js';
import { kubectl } from '../testing/kubectl.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';
import { dumpDifferences, meshProxies, proxyDump, restartDaemon, settledDumps, type ComparableDump } from './testing/config-dumps.js';
import { errorMessage } from '../runtime/index.js';

// Faults end to end (issue 21, item 4, part b): in Kubernetes mode, the API server double
// misbehaves while policies, DestinationRules, Services and EndpointSlices churn. It refuses
// connections for a while (changes land while the daemon is cut off, its watches resume from
// their resource versions), then forgets its history and drops every watch while answering 410
// Gone to the next lists and watches (the daemon relists, and must notice deletions it never saw
// as events). Afterwards every proxy holds each remaining object once and none removed, equal to
// what a fresh daemon computes from the same objects; curl follows the final policies.
const ADDRESS_BLOCK = 85;
let mesh: LocalMesh;
let faults: FaultControls;
let workDir: string;
const daemonLines: string[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'faults-apiserver-'));
  mesh = await startLocalMesh({
    workDir,
    orchestrator: 'kubernetes',
    addressBlock: ADDRESS_BLOCK,
    log: (line) => void (line.startsWith('[meshd]') && daemonLines.push(line)),
  });
  faults = mesh.apiServerFaults as FaultControls;
  await mesh.waitReady();
}, 60_000);

afterAll(async () => {
  faults?.refuseConnections(false);
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

const denyPolicy = (i: number): string => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: churn-${i}, namespace: bar }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ to: [{ operation: { paths: ["/churn-${i}"] } }] }]
`;

const peerAuthentication = (mode: string): string => `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: churn, namespace: bar }
spec:
  selector: { matchLabels: { app: httpbin } }
  mtls: { mode: ${mode} }
`;

/** A Service of its own for httpbin-bar, and a DestinationRule whose one subset names its generation. */
const service = (i: number, generation: number): string => `apiVersion: v1
kind: Service
metadata: { name: churn-svc-${i}, namespace: bar }
spec:
  selector: { app: httpbin }
  ports: [{ name: http, port: 8000, targetPort: 8080, protocol: TCP }]
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: churn-svc-${i}, namespace: bar }
spec:
  host: churn-svc-${i}.bar.svc.cluster.local
  subsets: [{ name: g${generation}, labels: { version: v1 } }]
`;

/** A Service selecting httpbin-bar only while the pod carries the label `endpoint: on`. */
const ENDPOINT_SERVICE = `apiVersion: v1
kind: Service
metadata: { name: churn-ep, namespace: bar }
spec:
  selector: { app: httpbin, endpoint: "on" }
  ports: [{ name: http, port: 8000, targetPort: 8080, protocol: TCP }]
`;

let round = 0;
async function applyRound(documents: readonly string[]): Promise<void> {
  await mesh.apply(`round-${round++}.yaml`, documents.join('---\n'));
}

async function remove(objects: readonly string[]): Promise<void> {
  const result = await kubectl({ kubeconfig: mesh.kubeconfigPath ?? '', home: workDir }, ['delete', '-n', 'bar', ...objects]);
  expect(result).toMatchObject({ code: 0 });
}

const removeService = (i: number): string[] => [`service/churn-svc-${i}`, `destinationrule.networking.mesh.io/churn-svc-${i}`];

/** Endpoint churn: httpbin-bar labelled in or out of `churn-ep`'s selector. */
async function selectPod(on: boolean): Promise<void> {
  const result = await kubectl({ kubeconfig: mesh.kubeconfigPath ?? '', home: workDir }, [
    'label',
    '--overwrite',
    '-n',
    'bar',
    'pod/httpbin-bar',
    on ? 'endpoint=on' : 'endpoint=off',
  ]);
  expect(result).toMatchObject({ code: 0 });
}

const proxyAt = (id: string): string => meshProxies(mesh).find((proxy) => proxy.id === id)?.podIp ?? '';

interface ChurnState {
  /** How often each `/churn-<i>` deny path appears in httpbin-bar's listeners. */
  readonly denies: Map<number, number>;
  /** Per churn service at sleep-foo: its subsets (the DestinationRule's generation) and endpoints. */
  readonly services: Map<number, { subsets: string[]; endpoints: number }>;
  /** The endpoints of `churn-ep` at sleep-foo. */
  readonly selected: number;
  /** The PeerAuthentication's mode at httpbin-bar: plaintext accepted on its port (PERMISSIVE) or not (STRICT). */
  readonly mode: 'PERMISSIVE' | 'STRICT';
}

interface FilterChain {
  filter_chain_match?: { destination_port?: { value?: number }; transport_protocol?: string };
}

const endpointCount = (dump: ComparableDump, cluster: string): number =>
  JSON.stringify(dump['endpoints']?.[cluster] ?? {}).match(/"address":"127\./g)?.length ?? 0;

async function churnState(): Promise<ChurnState> {
  const server = await proxyDump(proxyAt('httpbin-bar.bar'));
  const text = JSON.stringify(server['listeners']);
  const chains = Object.values(server['listeners'] ?? {}).flatMap((listener) => (listener as { filter_chains?: FilterChain[] }).filter_chains ?? []);
  const plaintext = chains.some(
    (chain) => chain.filter_chain_match?.destination_port?.value === 8080 && chain.filter_chain_match.transport_protocol === 'raw_buffer',
  );
  const denies = new Map<number, number>();
  for (const match of text.matchAll(/"\/churn-(\d+)"/g)) denies.set(Number(match[1]), (denies.get(Number(match[1])) ?? 0) + 1);
  const client = await proxyDump(proxyAt('sleep-foo.foo'));
  const services = new Map<number, { subsets: string[]; endpoints: number }>();
  for (const name of Object.keys(client['clusters'] ?? {})) {
    const match = /^outbound\|8000\|(\w*)\|churn-svc-(\d+)\.bar\.svc\.cluster\.local$/.exec(name);
    if (!match) continue;
    const entry = services.get(Number(match[2])) ?? { subsets: [], endpoints: 0 };
    if (match[1]) entry.subsets.push(match[1]);
    else entry.endpoints = endpointCount(client, name);
    services.set(Number(match[2]), entry);
  }
  return { denies, services, selected: endpointCount(client, 'outbound|8000||churn-ep.bar.svc.cluster.local'), mode: plaintext ? 'PERMISSIVE' : 'STRICT' };
}

/** Waits until the proxies hold exactly these deny paths (each as often as the others), services (each with its generation's subset only), `churn-ep` endpoints and mTLS mode. */
async function waitForChurnState(
  denies: readonly number[],
  services: Readonly<Record<number, number>>,
  selected: number,
  mode: ChurnState['mode'],
  description: string,
): Promise<void> {
  let last: ChurnState | undefined;
  await waitFor(
    async () => {
      const state = (last = await churnState());
      const wanted = Object.entries(services);
      return (
        state.denies.size === denies.length &&
        denies.every((i) => state.denies.has(i)) &&
        new Set(state.denies.values()).size <= 1 &&
        state.services.size === wanted.length &&
        wanted.every(([i, generation]) => JSON.stringify(state.services.get(Number(i))) === JSON.stringify({ subsets: [`g${generation}`], endpoints: 1 })) &&
        state.selected === selected &&
        state.mode === mode
      );
    },
    { timeoutMs: 45_000, intervalMs: 100, description },
  ).catch((error: unknown) => {
    throw new Error(
      `${errorMessage(error)}; last seen ${JSON.stringify({ denies: [...(last?.denies ?? [])], services: [...(last?.services ?? [])], selected: last?.selected, mode: last?.mode })}`,
    );
  });
}

const failures = (): number => daemonLines.filter((line) => line.includes('list/watch failed')).length;
/** True once some informer has failed twice in a row since `from` lines: a reconnect attempt refused, not only the cut. */
const retriedWhileRefused = (from: number): boolean =>
  daemonLines
    .filter((line) => line.includes('list/watch failed'))
    .slice(from)
    .some((line) => !/\bfailures=1\b/.test(line));
const relists = (): number => daemonLines.filter((line) => line.includes('resource version expired, relisting')).length;

describe('the API server misbehaving during churn', () => {
  test('afterwards every proxy holds the final objects once, equal to a fresh daemon’s, and traffic follows them', async () => {
    await applyRound([
      denyPolicy(0),
      denyPolicy(1),
      denyPolicy(2),
      peerAuthentication('STRICT'),
      service(0, 1),
      service(1, 1),
      service(2, 1),
      ENDPOINT_SERVICE,
    ]);
    await selectPod(true);
    await waitForChurnState([0, 1, 2], { 0: 1, 1: 1, 2: 1 }, 1, 'STRICT', 'the first round');

    // Refused connections for a while: every watch cut, and reconnects fail until it ends.
    const failedBefore = failures();
    faults.refuseConnections(true);
    await waitFor(() => retriedWhileRefused(failedBefore), { timeoutMs: 15_000, description: 'the daemon failing to reconnect while refused' });
    faults.refuseConnections(false);
    // Changes while the daemon is still backing off: its watches must resume without losing them.
    await applyRound([denyPolicy(3), denyPolicy(4), peerAuthentication('PERMISSIVE'), service(0, 2), service(3, 1)]);
    await remove(['authorizationpolicy.security.mesh.io/churn-1', ...removeService(1)]);
    await selectPod(false);
    await waitForChurnState([0, 2, 3, 4], { 0: 2, 2: 1, 3: 1 }, 0, 'PERMISSIVE', 'the changes made around the refusal');

    // History forgotten, watches dropped, and the next lists and watches answered 410 Gone.
    const relistsBefore = relists();
    faults.compactHistory();
    faults.failNext(4, 410);
    faults.dropWatches();
    await waitFor(() => faults.pendingFailures() === 0, { timeoutMs: 15_000, description: 'the daemon receiving the 410s' });
    await applyRound([denyPolicy(5), denyPolicy(6), service(2, 3), service(4, 1), peerAuthentication('STRICT')]);
    await remove(['authorizationpolicy.security.mesh.io/churn-3', 'authorizationpolicy.security.mesh.io/churn-5', ...removeService(3)]);
    await selectPod(true);
    // Once more while the daemon relists: deletions it only learns of from the list.
    faults.compactHistory();
    faults.dropWatches();
    await applyRound([denyPolicy(7), service(5, 1)]);
    await remove(['authorizationpolicy.security.mesh.io/churn-0', ...removeService(0)]);

    const finalDenies = [2, 4, 6, 7];
    const finalServices = { 2: 3, 4: 1, 5: 1 };
    await waitForChurnState(finalDenies, finalServices, 1, 'STRICT', 'the final objects at the proxies');
    expect(relists()).toBeGreaterThan(relistsBefore);

    // A fresh daemon over the same objects computes the same config for every proxy.
    const settled = await settledDumps(mesh, 15_000);
    await restartDaemon(mesh, 30_000);
    await waitForChurnState(finalDenies, finalServices, 1, 'STRICT', 'the final objects from the fresh daemon');
    const fresh = await settledDumps(mesh, 15_000);
    expect(dumpDifferences(settled, fresh)).toEqual([]);
    expect(fresh).toEqual(settled);

    const get = (url: string): Promise<{ code: string }> => curl(['-x', mesh.proxyOf('foo'), url]);
    expect((await get('http://httpbin.bar:8000/churn-7')).code).toBe('403');
    expect((await get('http://httpbin.bar:8000/churn-0')).code).not.toBe('403');
    expect((await get('http://churn-svc-5.bar:8000/ip')).code).toBe('200');
    expect((await get('http://churn-ep.bar:8000/ip')).code).toBe('200');
    expect((await get('http://churn-svc-0.bar:8000/ip')).code).not.toBe('200');
  }, 150_000);
});
