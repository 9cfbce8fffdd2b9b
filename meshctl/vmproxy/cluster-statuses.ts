import { clustersOf, dumpOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/** Envoy reports an endpoint EDS sent without a health status as HEALTHY. */
function healthOf(endpoint: Json): string {
  const status = endpoint['health_status'];
  return typeof status === 'string' && status !== 'UNKNOWN' ? status : 'HEALTHY';
}

/** A weight as Envoy's JSON (a number) or the proto's wrapper (`{value}`) has it; 1 when unset. */
function weightOf(weight: unknown): number {
  const value = typeof weight === 'object' && weight !== null ? (weight as Json)['value'] : weight;
  return value === undefined ? 1 : Number(value);
}

/**
 * The shape of a proxy's `/clusters?format=json` (`cluster_statuses[].host_statuses[]`) from the
 * endpoints a config dump holds: the EDS assignments and the clusters' own load assignments
 * (STATIC, STRICT_DNS). What a live proxy adds (outlier ejections, DNS answers, counters) is not
 * in a dump; hosts are as they were sent.
 */
export function clusterStatusesOf(dump: EnvoyConfigDump): { cluster_statuses: Json[] } {
  const assignments = new Map<string, Json>();
  for (const cluster of clustersOf(dump)) {
    const assignment = cluster['load_assignment'] as Json | undefined;
    if (assignment) assignments.set(String(cluster['name'] ?? ''), assignment);
  }
  for (const entry of list(dumpOf(dump, 'EndpointsConfigDump')['dynamic_endpoint_configs'])) {
    const assignment = (entry['endpoint_config'] as Json | undefined) ?? {};
    assignments.set(String(assignment['cluster_name'] ?? ''), assignment);
  }
  const statuses = [...assignments].map(([name, assignment]) => ({
    name,
    host_statuses: list(assignment['endpoints']).flatMap((locality) =>
      list(locality['lb_endpoints']).map((lbEndpoint) => ({
        address: ((lbEndpoint['endpoint'] as Json | undefined)?.['address'] as Json | undefined) ?? {},
        health_status: { eds_health_status: healthOf(lbEndpoint) },
        weight: weightOf(lbEndpoint['load_balancing_weight']),
        ...(locality['locality'] ? { locality: locality['locality'] } : {}),
      })),
    ),
  }));
  return { cluster_statuses: statuses.sort((a, b) => a.name.localeCompare(b.name)) };
}
