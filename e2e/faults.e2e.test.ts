import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

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

/** A config dump as comparable data: the xDS resources by type and name, without versions and times. */
function comparable(dump: { configs: Record<string, unknown>[] }): Record<string, Record<string, unknown>> {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'version_info' && key !== 'last_updated').map(([key, item]) => [key, strip(item)]));
  };
  const byName = (items: unknown, pick: (item: Record<string, unknown>) => Record<string, unknown> | undefined, nameOf: (resource: Record<string, unknown>) => string): Record<string, unknown> =>
    Object.fromEntries(
      ((items as Record<string, unknown>[] | undefined) ?? [])
        .map(pick)
        .filter((resource): resource is Record<string, unknown> => resource !== undefined)
        .map((resource) => [nameOf(resource), strip(resource)] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  const of = (kind: string): Record<string, unknown> => dump.configs.find((config) => String(config['@type']).endsWith(kind)) ?? {};
  const name = (resource: Record<string, unknown>): string => String(resource['name'] ?? resource['cluster_name']);
  return {
    clusters: byName(of('ClustersConfigDump')['dynamic_active_clusters'], (item) => item['cluster'] as Record<string, unknown>, name),
    listeners: byName(of('ListenersConfigDump')['dynamic_listeners'], (item) => (item['active_state'] as Record<string, unknown> | undefined)?.['listener'] as Record<string, unknown> | undefined, name),
    routes: byName(of('RoutesConfigDump')['dynamic_route_configs'], (item) => item['route_config'] as Record<string, unknown>, name),
    endpoints: byName(of('EndpointsConfigDump')['dynamic_endpoint_configs'], (item) => item['endpoint_config'] as Record<string, unknown>, name),
  };
}

const proxies = (): { id: string; podIp: string }[] => mesh.workloads.filter((workload) => workload.kind !== 'none').map((workload) => ({ id: `${workload.name}.${workload.namespace}`, podIp: workload.podIp }));

async function proxyDump(podIp: string): Promise<Record<string, Record<string, unknown>>> {
  return comparable((await (await fetch(`http://${podIp}:15000/config_dump`)).json()) as { configs: Record<string, unknown>[] });
}

async function allDumps(): Promise<Record<string, Record<string, Record<string, unknown>>>> {
  return Object.fromEntries(await Promise.all(proxies().map(async (proxy) => [proxy.id, await proxyDump(proxy.podIp)] as const)));
}

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

    const settled = await allDumps();
    await mesh.killDaemon();
    await mesh.startDaemon();
    // A fresh daemon over the same folder: each proxy reconnects, receives its config again, and it is the same.
    await waitFor(async () => (await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/syncz`)).json() as unknown[]).length >= proxies().length, { timeoutMs: 30_000, description: 'every proxy reconnected' });
    await mesh.waitReady();
    expect(await allDumps()).toEqual(settled);

    // Traffic still follows the final policies.
    const get = (path: string) => curl(['-x', mesh.proxyOf('foo'), `http://httpbin.bar:8000${path}`]);
    expect((await get('/flood-0')).code).toBe('403');
    expect((await get('/flood-1')).code).not.toBe('403');
  }, 120_000);
});
