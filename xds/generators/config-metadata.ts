import { KINDS } from '../../crds/index.js';
import { jsonToStruct } from '../envoy/struct-json.js';

/**
 * The `filter_metadata.mesh.config` of a cluster or route: the path of the DestinationRule or
 * VirtualService it came from (the reference's form), which `meshctl proxy-config` and
 * `x describe` read back to name the config behind each piece.
 */
export function configMetadata(kind: 'DestinationRule' | 'VirtualService', namespace: string, name: string): { filter_metadata: Record<string, unknown> } {
  const info = KINDS[kind];
  const segment = kind === 'DestinationRule' ? 'destination-rule' : 'virtual-service';
  return { filter_metadata: { mesh: jsonToStruct({ config: `/apis/${info.group}/${info.version}/namespaces/${namespace}/${segment}/${name}` }) } };
}
