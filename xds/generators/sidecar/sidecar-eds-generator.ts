import type { Generator, NamedResource, PushMemo } from '../../generator.js';
import { memoOf } from '../../encoding/index.js';
import { sortedUnique } from '../../watch-state.js';
import type { Proxy } from '../../proxy.js';
import { ENDPOINT_TYPE } from '../../envoy/type-urls.js';
import { buildClusterLoadAssignment } from '../cluster-load-assignment.js';
import { parseClusterName } from '../../model/cluster-names.js';
import { destinationRuleKey } from '../../model/destination-rule-policy.js';
import type { PushContext } from '../../model/push-context.js';
import { buildSidecarClusters, isEdsCluster, type BuildSidecarClustersOptions } from './sidecar-clusters.js';

/**
 * EDS for sidecars: a load assignment per requested cluster (every EDS cluster of the proxy on
 * a wildcard request). An endpoint-only push naming Services answers only their clusters, and
 * nothing when the proxy holds none of them.
 */
export function newSidecarEdsGenerator(options: Pick<BuildSidecarClustersOptions, 'edsForHeadless'> = {}): Generator<PushContext> {
  return {
    typeUrl: ENDPOINT_TYPE,
    generate(proxy, push, request) {
      const memo = memoOf(request);
      let names = request.names.length > 0 ? request.names : edsClusterNames(proxy, push, options);
      if (!request.full && request.configsUpdated.length > 0) {
        const hosts = request.configsUpdated.filter((key) => key.kind === 'Service').map((key) => `${key.name}.${key.namespace}.svc.${push.domain}`);
        names = clustersOfHosts(names, request.names.length > 0 ? request.namesKey : undefined, hosts, memo);
        if (names.length === 0) return undefined;
        return { resources: loadAssignments(names, proxy, push, memo).resources };
      }
      const { namesKey } = request;
      if (namesKey === undefined || request.names.length === 0) return { resources: loadAssignments(names, proxy, push, memo).resources };
      // A shared subscription of plain clusters gets one frozen list per push: the encoding layer
      // then encodes the list once for every proxy that sends it.
      const sharedKey = `sidecar-eds/list/${namesKey}`;
      let built: { resources: NamedResource[]; plain: boolean } | undefined;
      const shared = memo.get(sharedKey, () => {
        built = loadAssignments(names, proxy, push, memo);
        return built.plain ? Object.freeze(built.resources) : null;
      });
      if (shared) return { resources: shared, sharedKey };
      return { resources: (built ?? loadAssignments(names, proxy, push, memo)).resources };
    },
  };
}

/**
 * The load assignment of each name, and whether all are plain (subset-less) clusters: those read
 * nothing of the proxy, and each is one resource per push, shared.
 */
function loadAssignments(names: readonly string[], proxy: Proxy, push: PushContext, memo: PushMemo): { resources: NamedResource[]; plain: boolean } {
  let plain = true;
  const plainByName = memo.get('sidecar-eds/plain', () => new Map<string, NamedResource>());
  const resources = sortedUnique(names).map((name) => {
    const known = plainByName.get(name);
    if (known) return known;
    const parsed = parseClusterName(name);
    const service = parsed ? push.serviceByHost.get(parsed.hostname) : undefined;
    const isPlain = parsed !== undefined && !parsed.subset;
    const resource: NamedResource = {
      name,
      // Subsets read the DestinationRules the proxy's namespace sees; plain clusters read nothing of the proxy.
      cacheKey: parsed?.subset ? `${name}@${destinationRuleKey(push, proxy, parsed.hostname)}` : name,
      ...(service ? { dependsOn: [{ kind: 'Service' as const, namespace: service.namespace, name: service.name }] } : {}),
      ...(isPlain ? { sharedKey: `sidecar-eds/${name}` } : {}),
      resource: () => buildClusterLoadAssignment(push, proxy, name),
    };
    if (isPlain) plainByName.set(name, resource);
    else plain = false;
    return resource;
  });
  return { resources, plain };
}

/**
 * The names of the changed hosts' clusters. A shared subscription is indexed by host once per
 * push: an endpoint push then finds a proxy's clusters of the changed Services without reading
 * its thousand names.
 */
function clustersOfHosts(names: readonly string[], namesKey: string | undefined, hosts: readonly string[], memo: PushMemo): readonly string[] {
  if (namesKey === undefined) return names.filter((name) => isClusterOfAny(name, hosts));
  const index = memo.get(`sidecar-eds/hosts/${namesKey}`, () => indexByHost(names));
  return hosts.length === 1 ? (index.get(hosts[0] as string) ?? []) : hosts.flatMap((host) => index.get(host) ?? []);
}

/** The host is what follows the last `|` of a cluster name: checked in place, for every watched name of every proxy. */
function isClusterOfAny(name: string, hosts: readonly string[]): boolean {
  for (const host of hosts) {
    const bar = name.length - host.length - 1;
    if (bar >= 0 && name.charCodeAt(bar) === 124 && name.endsWith(host)) return true;
  }
  return false;
}

/** Cluster names by the host after their last `|` (`outbound|80||a.ns.svc.cluster.local`). */
function indexByHost(names: readonly string[]): Map<string, string[]> {
  const index = new Map<string, string[]>();
  for (const name of names) {
    const host = name.slice(name.lastIndexOf('|') + 1);
    const list = index.get(host);
    if (list) list.push(name);
    else index.set(host, [name]);
  }
  return index;
}

function edsClusterNames(proxy: Proxy, push: PushContext, options: Pick<BuildSidecarClustersOptions, 'edsForHeadless'>): string[] {
  return buildSidecarClusters(proxy, push, options)
    .filter(isEdsCluster)
    .map((cluster) => cluster.name);
}
