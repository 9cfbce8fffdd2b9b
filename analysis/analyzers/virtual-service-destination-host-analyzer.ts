import type { Analyzer } from '../analyzer.js';
import { fullHostName, servicesByHost } from './hosts.js';
import { appliesOnlyToGateways, destinationsOf } from './virtual-service-refs.js';

/**
 * MSH0101: a VirtualService routing to a host that is no Service of the snapshot, or to a port the
 * Service does not have. A short host is a Service of the VirtualService's namespace; any other
 * namespace's Service is named in full with the cluster's domain suffix; hosts with wildcards are
 * not checked. MSH0112: on a gateway, a destination without a port on a Service with several ports
 * (the gateway cannot tell which one to send to; sidecars route per port and need none).
 */
export const destinationHostAnalyzer: Analyzer = {
  name: 'virtualservice.DestinationHostAnalyzer',
  description: 'Checks the destination hosts associated with each virtual service',
  inputs: ['VirtualService', 'Service'],
  analyze(context) {
    const services = servicesByHost(context.read('Service'), context.domainSuffix);
    for (const resource of context.read('VirtualService')) {
      for (const destination of destinationsOf(resource.object.spec)) {
        const host = fullHostName(destination.host, resource.namespace, context.domainSuffix);
        if (host.includes('*')) continue;
        const service = services.get(host);
        if (service === undefined) {
          context.report('ReferencedResourceNotFound', resource, `Referenced host not found: "${destination.host}"`);
          continue;
        }
        const ports = (service.object.spec?.ports ?? []).map((p) => p.port);
        const port = destination.port?.number;
        if (port !== undefined && !ports.includes(port)) {
          context.report('ReferencedResourceNotFound', resource, `Referenced host+port not found: "${destination.host}+${port}"`);
        } else if (port === undefined && ports.length > 1 && appliesOnlyToGateways(resource.object.spec)) {
          const message = `This VirtualService routes to a service "${destination.host}" that exposes multiple ports [${ports.join(' ')}]. Specifying a port in the destination is required to disambiguate.`;
          context.report('VirtualServiceDestinationPortSelectorRequired', resource, message);
        }
      }
    }
  },
};
