import type { Analyzer } from '../analyzer.js';
import { fullHostName, hostCovers, isVisibleIn, visibilityOf } from './hosts.js';
import { destinationsOf } from './virtual-service-refs.js';

/**
 * MSH0101: a VirtualService routing to a subset that no DestinationRule for the host defines. A
 * DestinationRule counts when its host covers the destination (wildcards included) and it is
 * exported to the VirtualService's namespace.
 */
export const destinationRuleAnalyzer: Analyzer = {
  name: 'virtualservice.DestinationRuleAnalyzer',
  description: 'Checks the destination rules associated with each virtual service',
  inputs: ['VirtualService', 'DestinationRule', 'MeshConfig'],
  analyze(context) {
    const defaults = context.read('MeshConfig').defaultDestinationRuleExportTo;
    const rules = context.read('DestinationRule').map((rule) => ({
      host: fullHostName(rule.object.spec.host, rule.namespace, context.domainSuffix),
      visibility: visibilityOf(rule.object.spec.exportTo, defaults, rule.namespace),
      subsets: new Set((rule.object.spec.subsets ?? []).map((subset) => subset.name)),
    }));
    for (const resource of context.read('VirtualService')) {
      for (const destination of destinationsOf(resource.object.spec)) {
        const subset = destination.subset;
        if (subset === undefined || subset === '') continue;
        const host = fullHostName(destination.host, resource.namespace, context.domainSuffix);
        const defined = rules.some((rule) => rule.subsets.has(subset) && hostCovers(rule.host, host) && isVisibleIn(rule.visibility, resource.namespace));
        if (!defined) {
          context.report('ReferencedResourceNotFound', resource, `Referenced host+subset in destinationrule not found: "${destination.host}+${subset}"`);
        }
      }
    }
  },
};
