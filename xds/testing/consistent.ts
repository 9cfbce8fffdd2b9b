/**
 * Test support: whether a generated xDS snapshot hangs together the way Envoy needs it. Run on
 * every snapshot the generator tests produce, beside the golden comparison: a golden file pins
 * what is generated, this says whether what is generated can work.
 */

type Message = Record<string, unknown>;

/** The resources of one proxy, by type; a type left out is not checked. */
export interface XdsSnapshot {
  readonly listeners?: readonly Message[];
  readonly routes?: readonly Message[];
  readonly clusters?: readonly Message[];
  readonly endpoints?: readonly Message[];
}

/**
 * The inconsistencies of a snapshot, empty when there are none: every EDS name is asked for by a
 * CDS cluster and every EDS cluster has its load assignment; every RDS name is referenced by LDS
 * and every LDS reference has its route configuration; every cluster a route or TCP proxy sends
 * to exists in CDS.
 */
export function consistent(snapshot: XdsSnapshot): string[] {
  const problems: string[] = [];
  const { listeners, routes, clusters, endpoints } = snapshot;
  if (clusters && endpoints) {
    const edsNames = new Set(clusters.filter((cluster) => cluster['type'] === 'EDS').map(edsServiceName));
    const assigned = new Set(endpoints.map((assignment) => String(assignment['cluster_name'])));
    for (const name of assigned) if (!edsNames.has(name)) problems.push(`EDS ${name} is referenced by no CDS cluster`);
    for (const name of edsNames) if (!assigned.has(name)) problems.push(`CDS cluster ${name} has no EDS load assignment`);
  }
  if (listeners && routes) {
    const referenced = stringsUnder(listeners, 'route_config_name');
    const served = new Set(routes.map((route) => String(route['name'])));
    for (const name of served) if (!referenced.has(name)) problems.push(`RDS ${name} is referenced by no LDS listener`);
    for (const name of referenced) if (!served.has(name)) problems.push(`LDS references RDS ${name}, which is not served`);
  }
  if (clusters) {
    const known = new Set(clusters.map((cluster) => String(cluster['name'])));
    const sentTo = new Set([...clusterTargets(routes ?? []), ...stringsUnder(listeners ?? [], 'cluster')]);
    for (const name of sentTo) if (!known.has(name)) problems.push(`traffic is sent to cluster ${name}, which CDS does not have`);
  }
  return problems.sort();
}

function edsServiceName(cluster: Message): string {
  const config = cluster['eds_cluster_config'] as { service_name?: string } | undefined;
  return config?.service_name || String(cluster['name']);
}

/** The clusters routes send to: `cluster` of a route action and `name` of each weighted cluster. */
function clusterTargets(routes: readonly Message[]): Set<string> {
  const targets = stringsUnder(routes, 'cluster');
  visit(routes, (key, value) => {
    if (key !== 'weighted_clusters' || value === null || typeof value !== 'object') return;
    for (const entry of (value as { clusters?: Message[] }).clusters ?? []) targets.add(String(entry['name']));
  });
  return targets;
}

/** Every string under `key`, at any depth. */
function stringsUnder(value: unknown, key: string): Set<string> {
  const found = new Set<string>();
  visit(value, (k, v) => {
    if (k === key && typeof v === 'string') found.add(v);
  });
  return found;
}

function visit(value: unknown, onEntry: (key: string, value: unknown) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, onEntry);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    onEntry(key, child);
    visit(child, onEntry);
  }
}
