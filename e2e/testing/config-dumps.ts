import { X509Certificate } from 'node:crypto';
import { waitFor } from '../../testing/wait-for.js';
import type { LocalMesh } from '../local-mesh/local-mesh.js';
import { errorMessage } from '../../runtime/index.js';

/** A config dump's xDS resources by kind and name, without versions and times. */
export type ComparableDump = Record<string, Record<string, unknown>>;

interface ConfigDump {
  configs: Record<string, unknown>[];
}

/** A config dump as comparable data: the xDS resources by type and name, without versions and times. */
export function comparable(dump: ConfigDump): ComparableDump {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== 'version_info' && key !== 'last_updated')
        .map(([key, item]) => [key, strip(item)]),
    );
  };
  const byName = (
    items: unknown,
    pick: (item: Record<string, unknown>) => Record<string, unknown> | undefined,
    nameOf: (resource: Record<string, unknown>) => string,
  ): Record<string, unknown> =>
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
    listeners: byName(
      of('ListenersConfigDump')['dynamic_listeners'],
      (item) => (item['active_state'] as Record<string, unknown> | undefined)?.['listener'] as Record<string, unknown> | undefined,
      name,
    ),
    routes: byName(of('RoutesConfigDump')['dynamic_route_configs'], (item) => item['route_config'] as Record<string, unknown>, name),
    endpoints: byName(of('EndpointsConfigDump')['dynamic_endpoint_configs'], (item) => item['endpoint_config'] as Record<string, unknown>, name),
  };
}

/** The mesh's proxies (sidecars and the gateway): `<pod>.<namespace>` and the pod address their admin port listens on. */
export function meshProxies(mesh: LocalMesh): { id: string; podIp: string }[] {
  return mesh.workloads
    .filter((workload) => workload.kind !== 'none')
    .map((workload) => ({ id: `${workload.name}.${workload.namespace}`, podIp: workload.podIp }));
}

/** With `include_eds`, so that endpoints are compared too. */
async function configDump(podIp: string): Promise<ConfigDump> {
  return (await (await fetch(`http://${podIp}:15000/config_dump?include_eds`)).json()) as ConfigDump;
}

export async function proxyDump(podIp: string): Promise<ComparableDump> {
  return comparable(await configDump(podIp));
}

/** Every proxy's comparable config dump, by proxy id. */
export async function allDumps(mesh: LocalMesh): Promise<Record<string, ComparableDump>> {
  return Object.fromEntries(await Promise.all(meshProxies(mesh).map(async (proxy) => [proxy.id, await proxyDump(proxy.podIp)] as const)));
}

/**
 * Kills the daemon and starts a fresh one over the same inputs, and waits until every proxy has
 * reconnected to it and is ready again: what the proxies then hold is what a fresh daemon computes.
 */
export async function restartDaemon(mesh: LocalMesh, timeoutMs: number): Promise<void> {
  await mesh.killDaemon();
  await mesh.startDaemon();
  const expected = meshProxies(mesh).length;
  await waitFor(async () => ((await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/syncz`)).json()) as unknown[]).length >= expected, {
    timeoutMs,
    description: 'every proxy reconnected to the fresh daemon',
  });
  await mesh.waitReady();
}

/** The workload certificate (`default`) a proxy's data plane serves, from its SecretsConfigDump. */
export async function servedCertificate(podIp: string): Promise<{ serial: string; notAfter: number } | undefined> {
  const dump = await configDump(podIp);
  const secrets = (dump.configs.find((config) => String(config['@type']).endsWith('SecretsConfigDump'))?.['dynamic_active_secrets'] ?? []) as {
    name: string;
    secret: { tls_certificate?: { certificate_chain: { inline_bytes: string } } };
  }[];
  const chain = secrets.find((secret) => secret.name === 'default')?.secret.tls_certificate?.certificate_chain.inline_bytes;
  if (!chain) return undefined;
  const leaf = new X509Certificate(Buffer.from(chain, 'base64'));
  return { serial: leaf.serialNumber, notAfter: Date.parse(leaf.validTo) };
}

/** Where two sets of dumps differ: `<proxy> <kind> <name>` for each resource added, removed or changed. */
export function dumpDifferences(before: Record<string, ComparableDump>, after: Record<string, ComparableDump>): string[] {
  const differences: string[] = [];
  for (const proxy of new Set([...Object.keys(before), ...Object.keys(after)])) {
    for (const kind of ['clusters', 'listeners', 'routes', 'endpoints']) {
      const was = before[proxy]?.[kind] ?? {};
      const is = after[proxy]?.[kind] ?? {};
      for (const name of new Set([...Object.keys(was), ...Object.keys(is)])) {
        if (JSON.stringify(was[name]) !== JSON.stringify(is[name])) differences.push(`${proxy} ${kind} ${name}`);
      }
    }
  }
  return differences.sort();
}

/** The EDS clusters a proxy holds without their endpoints (`<proxy> <cluster>`): the data plane is still warming them. */
export function clustersWithoutEndpoints(dumps: Record<string, ComparableDump>): string[] {
  return Object.entries(dumps).flatMap(([proxy, dump]) =>
    Object.entries(dump['clusters'] ?? {})
      .filter(([, cluster]) => (cluster as { type?: string }).type === 'EDS')
      .map(([name, cluster]) => (cluster as { eds_cluster_config?: { service_name?: string } }).eds_cluster_config?.service_name ?? name)
      .filter((service) => dump['endpoints']?.[service] === undefined)
      .map((service) => `${proxy} ${service}`),
  );
}

/** Every proxy's dump once each holds the endpoints of all its EDS clusters (a push's EDS can trail its CDS). */
export async function settledDumps(mesh: LocalMesh, timeoutMs: number): Promise<Record<string, ComparableDump>> {
  let warming: string[] = [];
  return waitFor(
    async () => {
      const dumps = await allDumps(mesh);
      warming = clustersWithoutEndpoints(dumps);
      return warming.length === 0 ? dumps : undefined;
    },
    { timeoutMs, intervalMs: 100, description: 'every proxy holding the endpoints of its clusters' },
  ).catch((error: unknown) => {
    throw new Error(`${errorMessage(error)}; still without: ${warming.join(', ')}`, { cause: error });
  });
}
