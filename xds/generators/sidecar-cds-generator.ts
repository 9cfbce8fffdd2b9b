import type { Generator } from '../generator.js';
import { CLUSTER_TYPE } from '../type-urls.js';
import type { PushContext } from './push-context.js';
import { buildSidecarClusters, type BuildSidecarClustersOptions } from './sidecar-clusters.js';

/** CDS for sidecars: every cluster each push (a wildcard type); endpoint-only pushes leave it alone. */
export function newSidecarCdsGenerator(options: BuildSidecarClustersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: CLUSTER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      return { resources: buildSidecarClusters(proxy, push, options).map((cluster) => ({ name: cluster.name, resource: cluster })) };
    },
  };
}
