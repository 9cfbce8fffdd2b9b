import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';
import { dumpDifferences, meshProxies, proxyDump, restartDaemon, settledDumps } from './testing/config-dumps.js';

// Faults end to end (issue 21, item 4): the daemon killed (SIGKILL) in the middle of a flood of
// policy changes and started again. Afterwards each proxy holds what a fresh daemon computes from
// the final config folder: every flood policy that remains is there once, the removed ones are
// gone, and a further restart of the daemon (a fresh computation, no config change) leaves every
// proxy's config dump as it was.
const ADDRESS_BLOCK = 83;
let mesh: LocalMesh;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'faults-'));
  mesh = await startLocalMesh({ workDir, addressBlock: ADDRESS_BLOCK });
  await mesh.waitReady();
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

const floodPolicy = (i: number): string => `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: flood-${i}, namespace: bar }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ to: [{ operation: { paths: ["/flood-${i}"] } }] }]
`;

const proxies = (): { id: string; podIp: string }[] => meshProxies(mesh);

/** How often `/flood-<i>` appears in the httpbin sidecar's listeners (its RBAC rules). */
async function floodCounts(): Promise<Map<number, number>> {
  const httpbin = proxies().find((proxy) => proxy.id === 'httpbin-bar.bar');
  const text = JSON.stringify((await proxyDump(httpbin?.podIp ?? '')).listeners);
  const counts = new Map<number, number>();
  for (const match of text.matchAll(/"\/flood-(\d+)"/g)) counts.set(Number(match[1]), (counts.get(Number(match[1])) ?? 0) + 1);
  return counts;
}

describe('the daemon killed during a push flood', () => {
  test('afterwards every proxy holds the final config, nothing lost or duplicated, equal to a fresh daemon’s', async () => {
    expect((await floodCounts()).size).toBe(0);
    for (let i = 0; i < 10; i++) await mesh.apply(`flood-${i}.yaml`, floodPolicy(i));
    await mesh.killDaemon();
    // While the daemon is down: more policies, and some of the first ones removed.
    for (let i = 10; i < 20; i++) await mesh.apply(`flood-${i}.yaml`, floodPolicy(i));
    for (const i of [1, 3, 5]) await mesh.remove(`flood-${i}.yaml`);
    await mesh.startDaemon();
    for (let i = 20; i < 30; i++) await mesh.apply(`flood-${i}.yaml`, floodPolicy(i));
    for (const i of [12, 25]) await mesh.remove(`flood-${i}.yaml`);

    const expected = [...Array(30).keys()].filter((i) => ![1, 3, 5, 12, 25].includes(i));
    const counts = await waitFor(
      async () => {
        const now = await floodCounts();
        return now.size === expected.length && expected.every((i) => now.has(i)) ? now : undefined;
      },
      { timeoutMs: 30_000, description: 'the flood’s final policies at the httpbin sidecar' },
    );
    // Each policy once: every listener carrying the inbound RBAC names it the same number of times.
    expect(new Set(counts.values()).size).toBe(1);

    const settled = await settledDumps(mesh, 15_000);
    // A fresh daemon over the same folder: each proxy reconnects, receives its config again, and it is the same.
    await restartDaemon(mesh, 30_000);
    const fresh = await settledDumps(mesh, 15_000);
    expect(dumpDifferences(settled, fresh)).toEqual([]);
    expect(fresh).toEqual(settled);

    // Traffic still follows the final policies.
    const get = (path: string) => curl(['-x', mesh.proxyOf('foo'), `http://httpbin.bar:8000${path}`]);
    expect((await get('/flood-0')).code).toBe('403');
    expect((await get('/flood-1')).code).not.toBe('403');
  }, 120_000);
});
