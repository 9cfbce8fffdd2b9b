import type { VirtualService } from '../../crds/index.js';
import type { AnalysisContext, Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import type { ServiceEntry } from '../../crds/index.js';
import { fullHostName, hostCovers, isVisibleIn, servicesByHost, visibilityOf, type Visibility } from './hosts.js';
import { appliesOnlyToGateways, destinationsOf } from './virtual-service-refs.js';

/**
 * MSH0101: a VirtualService routing to a host that is no Service of the snapshot nor a host of a
 * ServiceEntry visible in its namespace (exactly, else by a wildcard host), or to a port the
 * Service or entry does not have. A short host is a Service of the VirtualService's namespace; any
 * other namespace's Service is named in full with the cluster's domain suffix; hosts with
 * wildcards are not checked. MSH0112: on a gateway, a destination without a port on a Service with several ports
 * (the gateway cannot tell which one to send to; sidecars route per port and need none).
 * MSH0140: see `reportIngressSubsets`.
 */
export const destinationHostAnalyzer: Analyzer = {
  name: 'virtualservice.DestinationHostAnalyzer',
  description: 'Checks the destination hosts associated with each virtual service',
  inputs: ['VirtualService', 'Service', 'ServiceEntry'],
  analyze(context) {
    const services = servicesByHost(context.read('Service'), context.domainSuffix);
    const entries = entryHosts(context.read('ServiceEntry'));
    for (const resource of context.read('VirtualService')) {
      for (const destination of destinationsOf(resource.object.spec)) {
        const host = fullHostName(destination.host, resource.namespace, context.domainSuffix);
        if (host.includes('*')) continue;
        const service = services.get(host);
        const entry = service ? undefined : entryFor(entries, host, resource.namespace);
        if (service === undefined && entry === undefined) {
          context.report('ReferencedResourceNotFound', resource, `Referenced host not found: "${destination.host}"`);
          continue;
        }
        const ports = service ? (service.object.spec?.ports ?? []).map((p) => p.port) : (entry?.ports ?? []);
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

/** A ServiceEntry host: its ports and the namespaces that see it. */
interface EntryHost {
  readonly host: string;
  readonly ports: readonly number[];
  readonly visibility: Visibility;
}

function entryHosts(entries: readonly Resource<ServiceEntry>[]): EntryHost[] {
  return entries.flatMap((entry) =>
    entry.object.spec.hosts.map((host) => ({
      host,
      ports: (entry.object.spec.ports ?? []).map((port) => port.number),
      visibility: visibilityOf(entry.object.spec.exportTo, undefined, entry.namespace),
    })),
  );
}

/** The entry host a destination host in `namespace` resolves to: an exact host first, then a wildcard one. */
function entryFor(entries: readonly EntryHost[], host: string, namespace: string): EntryHost | undefined {
  const visible = entries.filter((entry) => isVisibleIn(entry.visibility, namespace));
  return visible.find((entry) => entry.host === host) ?? visible.find((entry) => entry.host.includes('*') && hostCovers(entry.host, host));
}
