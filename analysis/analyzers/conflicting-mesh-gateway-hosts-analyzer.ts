import type { Analyzer } from '../analyzer.js';
import { fullHostName, visibilitiesOverlap, visibilityOf, type Visibility } from './hosts.js';
import { appliesToMesh } from './virtual-service-refs.js';
import type { Resource } from '../snapshot.js';
import type { VirtualService } from '../../crds/index.js';

interface Claim {
  readonly resource: Resource<VirtualService>;
  readonly visibility: Visibility;
}

/**
 * MSH0109: two VirtualServices of the mesh gateway defining the same host for sidecars that see
 * both. Hosts exported to namespaces no sidecar shares (`exportTo`) do not conflict: each sidecar
 * sees one of them.
 */
export const conflictingMeshGatewayHostsAnalyzer: Analyzer = {
  name: 'virtualservice.ConflictingMeshGatewayHostsAnalyzer',
  description: 'Checks if multiple virtual services associated with the mesh gateway have conflicting hosts',
  inputs: ['VirtualService', 'MeshConfig'],
  analyze(context) {
    const defaults = context.read('MeshConfig').defaultVirtualServiceExportTo;
    const claims = new Map<string, Claim[]>();
    for (const resource of context.read('VirtualService')) {
      if (!appliesToMesh(resource.object.spec)) continue;
      const visibility = visibilityOf(resource.object.spec.exportTo, defaults, resource.namespace);
      for (const host of new Set((resource.object.spec.hosts ?? []).map((h) => fullHostName(h, resource.namespace, context.domainSuffix)))) {
        claims.set(host, [...(claims.get(host) ?? []), { resource, visibility }]);
      }
    }
    for (const [host, list] of [...claims].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const claim of list) {
        const conflicting = list.filter((other) => other === claim || visibilitiesOverlap(other.visibility, claim.visibility));
        if (conflicting.length < 2) continue;
        const names = conflicting
          .map((c) => `${c.resource.namespace}/${c.resource.name}`)
          .sort()
          .join(',');
        const message = `The VirtualServices ${names} associated with mesh gateway define the same host ${host} which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.`;
        context.report('ConflictingMeshGatewayVirtualServiceHosts', claim.resource, message);
      }
    }
  },
};
