import type { Analyzer } from '../analyzer.js';
import { gatewayKey, MESH_GATEWAY } from './hosts.js';
import { gatewaysOf } from './virtual-service-refs.js';

/** MSH0101: a VirtualService naming a Gateway that does not exist. */
export const virtualServiceGatewayAnalyzer: Analyzer = {
  name: 'virtualservice.GatewayAnalyzer',
  description: 'Checks the gateways associated with each virtual service',
  inputs: ['VirtualService', 'Gateway'],
  analyze(context) {
    const gateways = new Set(context.read('Gateway').map((gateway) => `${gateway.namespace}/${gateway.name}`));
    for (const resource of context.read('VirtualService')) {
      for (const name of gatewaysOf(resource.object.spec)) {
        if (name === MESH_GATEWAY || gateways.has(gatewayKey(name, resource.namespace))) continue;
        context.report('ReferencedResourceNotFound', resource, `Referenced gateway not found: "${name}"`);
      }
    }
  },
};
