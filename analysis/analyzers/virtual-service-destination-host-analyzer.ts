import type { VirtualService } from '../../crds/index.js';
import type { AnalysisContext, Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { fullHostName, servicesByHost } from './hosts.js';
import { appliesOnlyToGateways, destinationsOf } from './virtual-service-refs.js';

/**
 * MSH0101: a VirtualService routing to a host that is no Service of the snapshot, or to a port the
 * Service does not have. A short host is a Service of the VirtualService's namespace; any other
 * namespace's Service is named in full with the cluster's domain suffix; hosts with wildcards are
 * not checked. MSH0112: on a gateway, a destination without a port on a Service with several ports
 * (the gateway cannot tell which one to send to; sidecars route per port and need none).
 * MSH0140: see `reportIngressSubsets`.
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
    reportIngressSubsets(context, context.read('VirtualService'));
  },
};

/**
 * MSH0140, as the reference finds it: a VirtualService with gateways routes without subset to a
 * host that another VirtualService (naming that host among its own hosts) splits by subset; the
 * subsets apply to sidecars, not to the gateway's requests. Hosts compare as written.
 */
function reportIngressSubsets(context: AnalysisContext, virtualServices: readonly Resource<VirtualService>[]): void {
  const routed = (vs: Resource<VirtualService>) => (vs.object.spec.http ?? []).flatMap((route) => (route.route ?? []).map((entry) => entry.destination));
  const split = virtualServices.map((vs) => ({
    name: `${vs.namespace}/${vs.name}`,
    hosts: new Set(
      routed(vs)
        .filter((d) => (d.subset ?? '') !== '' && (vs.object.spec.hosts ?? []).includes(d.host))
        .map((d) => d.host),
    ),
  }));
  for (const resource of virtualServices) {
    if ((resource.object.spec.gateways ?? []).length === 0) continue;
    for (const destination of routed(resource).filter((d) => (d.subset ?? '') === '')) {
      for (const other of split.filter((vs) => vs.hosts.has(destination.host))) {
        const message = `Subset in virtual service ${other.name} has no effect on ingress gateway ${resource.namespace}/${resource.name} requests`;
        context.report('IngressRouteRulesNotAffected', resource, message);
      }
    }
  }
}
