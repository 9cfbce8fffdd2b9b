import type { Generator, NamedResource, PushMemo } from '../../generator.js';
import type { Proxy } from '../../proxy.js';
import { CLUSTER_TYPE } from '../../envoy/type-urls.js';
import { destinationRuleKey } from '../../model/destination-rule-policy.js';
import type { PushContext } from '../../model/push-context.js';
import { contentText, memoOf } from '../../encoding/index.js';
import { buildInboundClusters, isIpv6Only, outboundClusters, type BuildSidecarClustersOptions } from './sidecar-clusters.js';

/**
 * What a sidecar's outbound clusters depend on besides the push: which DestinationRules it sees
 * (its namespace, and its labels when some rule selects workloads), and whether it is IPv6-only
 * (DNS clusters resolve the proxy's address family).
 */
function visibilityKey(proxy: Proxy, push: PushContext): string {
  let selecting = false;
  for (const rules of push.destinationRulesByHost.values()) {
    if (rules.some((entry) => entry.rule.spec.workloadSelector !== undefined)) selecting = true;
  }
  const family = isIpv6Only(proxy) ? '|v6' : '';
  if (!selecting) return `${proxy.configNamespace}${family}`;
  const labels = Object.entries(proxy.metadata.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${proxy.configNamespace}${family}@${JSON.stringify(labels)}`;
}

/**
 * CDS for sidecars: every cluster each push (a wildcard type); endpoint-only pushes leave it
 * alone. The outbound clusters depend on the push and on which DestinationRules the proxy sees,
 * so they are built once per push for every proxy that sees the same rules (and their encoded
 * bytes shared); inbound ones are the proxy's own.
 */
export function newSidecarCdsGenerator(options: BuildSidecarClustersOptions = {}): Generator<PushContext> {
  const outbound = (proxy: Proxy, push: PushContext, memo: PushMemo, visibility: string): readonly NamedResource[] =>
    memo.get(`sidecar-cds/outbound/${visibility}`, () => {
      // The encoded bytes depend on the one rule a cluster's host sees: shared across namespaces
      // that see the same, so a cluster is built only for the first of them (or after an eviction).
      const resources: NamedResource[] = outboundClusters(proxy, push, options).map((cluster) => ({
        name: cluster.name,
        resource: cluster.build,
        cacheKey: `${cluster.name}@${destinationRuleKey(push, proxy, cluster.hostname)}${cluster.contentKey === undefined ? '' : `#${cluster.contentKey}`}`,
        sharedKey: `sidecar-cds/${visibility}/${cluster.name}`,
      }));
      return resources.sort(byName);
    });
  return {
    typeUrl: CLUSTER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const memo = memoOf(request);
      const inbound = buildInboundClusters(proxy, push, options).map((cluster) => ({ name: cluster.name, resource: cluster }));
      inbound.sort(byName);
      const visibility = visibilityKey(proxy, push);
      const shared = outbound(proxy, push, memo, visibility);
      const inboundKey = contentKey(inbound);
      if (inboundKey === undefined) return { resources: mergeSorted(shared, inbound) };
      // Proxies whose inbound clusters are alike (replicas of a workload, workloads of one shape)
      // get one list per outbound list: it is then encoded and shared once, not merged and walked
      // a thousand entries at a time for each proxy.
      const sharedKey = `sidecar-cds/merged/${visibility}\n${inboundKey}`;
      return { resources: memo.get(sharedKey, () => Object.freeze(mergeSorted(shared, inbound))), sharedKey };
    },
  };
}

/** The inbound clusters' names and messages as JSON text (`contentText`); none when one is built on demand (a function has no text). */
function contentKey(inbound: readonly NamedResource[]): string | undefined {
  return inbound.some((resource) => typeof resource.resource === 'function') ? undefined : contentText(inbound);
}

function byName(a: NamedResource, b: NamedResource): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function mergeSorted(a: readonly NamedResource[], b: readonly NamedResource[]): NamedResource[] {
  const merged: NamedResource[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length)
    merged.push(byName(a[i] as NamedResource, b[j] as NamedResource) <= 0 ? (a[i++] as NamedResource) : (b[j++] as NamedResource));
  while (i < a.length) merged.push(a[i++] as NamedResource);
  while (j < b.length) merged.push(b[j++] as NamedResource);
  return merged;
}
