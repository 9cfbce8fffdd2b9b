import type { Generator } from '../generator.js';
import { CLUSTER_TYPE } from '../type-urls.js';
import { parseClusterName } from './cluster-names.js';
import { destinationRuleKey } from './destination-rule-policy.js';
import type { PushContext } from './push-context.js';
import { buildSidecarClusters, type BuildSidecarClustersOptions } from './sidecar-clusters.js';

/**
 * CDS for sidecars: every cluster each push (a wildcard type); endpoint-only pushes leave it
 * alone. Outbound clusters depend on the push and the DestinationRule the proxy sees for their
 * host, so their encoded bytes are shared by every proxy seeing the same rule; inbound ones are
 * the proxy's own.
 */
export function newSidecarCdsGenerator(options: BuildSidecarClustersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: CLUSTER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      return {
        resources: buildSidecarClusters(proxy, push, options).map((cluster) => ({
          name: cluster.name,
          resource: cluster,
          ...(cluster.name.startsWith('inbound|') ? {} : { cacheKey: `${cluster.name}@${destinationRuleKey(push, proxy, parseClusterName(cluster.name)?.hostname ?? '')}` }),
        })),
      };
    },
  };
}
