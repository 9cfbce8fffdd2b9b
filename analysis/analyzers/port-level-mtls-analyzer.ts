import { validateResource } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import { labelsOf, podsMatching, serviceSelects, targetPortOn } from './kube-objects.js';

/**
 * MSH1004: a `portLevelMtls` entry on a port that no Service selecting the policy's workloads sends
 * to: the proxy builds no inbound listener for it, so the entry is ignored. The check is crds'
 * own (`servicePortsForWorkload`), fed with the target ports of the Services of the matching pods.
 */
export const portLevelMtlsAnalyzer: Analyzer = {
  name: 'peerauthentication.PortLevelMtlsAnalyzer',
  description: 'Checks that each portLevelMtls port of a peer authentication is bound by a service of its workloads',
  inputs: ['PeerAuthentication', 'Service', 'Pod'],
  analyze(context) {
    const services = context.read('Service');
    const pods = context.read('Pod');
    const servicePortsForWorkload = (namespace: string | undefined, selector: Readonly<Record<string, string>>): readonly number[] | undefined => {
      const matching = podsMatching(pods, namespace, selector);
      if (matching.length === 0) return undefined;
      const ports = new Set<number>();
      for (const pod of matching) {
        for (const service of services.filter((s) => serviceSelects(s, pod.namespace, labelsOf(pod.object)))) {
          for (const port of service.object.spec?.ports ?? []) {
            const target = targetPortOn(port, pod.object.spec);
            if (target !== undefined) ports.add(target);
          }
        }
      }
      return [...ports];
    };
    for (const resource of context.read('PeerAuthentication')) {
      if (resource.object.spec.portLevelMtls === undefined) continue;
      for (const warning of validateResource(resource.object, { servicePortsForWorkload }).warnings) {
        if (warning.path.startsWith('spec.portLevelMtls')) context.report('PortLevelMtlsPortNotFound', resource, `${warning.path}: ${warning.message}`);
      }
    }
  },
};
