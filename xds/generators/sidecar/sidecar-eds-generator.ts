import type { Generator, NamedResource } from '../../generator.js';
import { sortedUnique } from '../../watch-state.js';
import type { Proxy } from '../../proxy.js';
import { ENDPOINT_TYPE } from '../../envoy/type-urls.js';
import { buildClusterLoadAssignment } from '../cluster-load-assignment.js';
import { parseClusterName } from '../cluster-names.js';
import { destinationRuleKey } from '../../model/destination-rule-policy.js';
import type { PushContext } from '../../model/push-context.js';
import { buildSidecarClusters, isEdsCluster } from './sidecar-clusters.js';

/**
 * EDS for sidecars: a load assignment per requested cluster (every EDS cluster of the proxy on
 * a wildcard request). An endpoint-only push naming Services answers only their clusters, and
 * nothing when the proxy holds none of them.
 */
export function newSidecarEdsGenerator(): Generator<PushContext> {
  // Plain (subset-less) clusters read nothing of the proxy: one resource object per push and name, shared.
  const sharedByPush = new WeakMap<PushContext, Map<string, NamedResource>>();
  // A shared (frozen) subscription indexed by host once: an endpoint push then finds a proxy's
  // clusters of the changed Services without reading its thousand names.
  const namesByHost = new WeakMap<readonly string[], Map<string, string[]>>();
  const clustersOfHosts = (names: readonly string[], hosts: readonly string[]): readonly string[] => {
    if (!Object.isFrozen(names)) return names.filter((name) => isClusterOfAny(name, hosts));
    let index = namesByHost.get(names);
    if (!index) namesByHost.set(names, (index = indexByHost(names)));
    return hosts.length === 1 ? (index.get(hosts[0] as string) ?? []) : hosts.flatMap((host) => index.get(host) ?? []);
  };
  const plainResources = new WeakSet<NamedResource>();
  const listsByPush = new WeakMap<PushContext, WeakMap<readonly string[], readonly NamedResource[]>>();
  const resourcesOf = (names: readonly string[], proxy: Proxy, push: PushContext): NamedResource[] => {
    let shared = sharedByPush.get(push);
    if (!shared) sharedByPush.set(push, (shared = new Map()));
    const sharedOfPush = shared;
    return sortedUnique(names).map((name) => {
      const known = sharedOfPush.get(name);
      if (known) return known;
      const parsed = parseClusterName(name);
      const service = parsed ? push.serviceByHost.get(parsed.hostname) : undefined;
      const resource: NamedResource = {
        name,
        // Subsets read the DestinationRules the proxy's namespace sees; plain clusters read nothing of the proxy.
        cacheKey: parsed?.subset ? `${name}@${destinationRuleKey(push, proxy, parsed.hostname)}` : name,
        ...(service ? { dependsOn: [{ kind: 'Service' as const, namespace: service.namespace, name: service.name }] } : {}),
        resource: () => buildClusterLoadAssignment(push, proxy, name),
      };
      if (parsed && !parsed.subset) {
        sharedOfPush.set(name, resource);
        plainResources.add(resource);
      }
      return resource;
    });
  };
  return {
    typeUrl: ENDPOINT_TYPE,
    generate(proxy, push, request) {
      let names = request.names.length > 0 ? request.names : edsClusterNames(proxy, push);
      if (!request.full && request.configsUpdated.length > 0) {
        const hosts = request.configsUpdated.filter((key) => key.kind === 'Service').map((key) => `${key.name}.${key.namespace}.svc.${push.domain}`);
        names = clustersOfHosts(names, hosts);
        if (names.length === 0) return undefined;
      }
      if (!Object.isFrozen(names)) return { resources: resourcesOf(names, proxy, push) };
      // A shared subscription of plain clusters gets one frozen list per push: the response sender
      // then encodes the list once for every proxy that sends it.
      let lists = listsByPush.get(push);
      if (!lists) listsByPush.set(push, (lists = new WeakMap()));
      const known = lists.get(names);
      if (known) return { resources: known };
      const resources = resourcesOf(names, proxy, push);
      if (resources.every((resource) => plainResources.has(resource))) lists.set(names, Object.freeze(resources));
      return { resources };
    },
  };
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

function edsClusterNames(proxy: Proxy, push: PushContext): string[] {
  return buildSidecarClusters(proxy, push).filter(isEdsCluster).map((cluster) => cluster.name);
}
