import type { Gateway } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { gatewayKey, hostsOverlap, MESH_GATEWAY } from './hosts.js';
import { gatewaysOf } from './virtual-service-refs.js';

/**
 * The hosts of a Gateway's servers that a VirtualService of `namespace` may bind to, as the
 * reference reads them: `ns/h` counts only for a VirtualService of `ns`, `.` standing for the
 * Gateway's namespace and `*` for any; a server with host `*` in namespace `*` takes every host.
 */
function hostsFor(gateway: Resource<Gateway> | undefined, namespace: string): string[] {
  const hosts = (gateway?.object.spec.servers ?? []).flatMap((server) => (server.hosts.includes('*/*') ? ['*'] : server.hosts));
  return hosts.flatMap((host) => {
    const slash = host.indexOf('/');
    if (slash < 0) return [host];
    const [hostNamespace, name] = [host.slice(0, slash), host.slice(slash + 1)];
    const owner = hostNamespace === '.' ? (gateway?.namespace ?? '') : hostNamespace;
    return owner === '*' || owner === namespace ? [name] : [];
  });
}

/**
 * MSH0101: a VirtualService naming a Gateway that does not exist. MSH0132: none of its hosts is
 * served by a Gateway it binds to (`gateways` at the top), reported also for a Gateway that does
 * not exist, as the reference does.
 */
export const virtualServiceGatewayAnalyzer: Analyzer = {
  name: 'virtualservice.GatewayAnalyzer',
  description: 'Checks the gateways associated with each virtual service',
  inputs: ['VirtualService', 'Gateway'],
  analyze(context) {
    const gateways = new Map(context.read('Gateway').map((gateway) => [`${gateway.namespace}/${gateway.name}`, gateway]));
    for (const resource of context.read('VirtualService')) {
      for (const name of gatewaysOf(resource.object.spec)) {
        if (name === MESH_GATEWAY || gateways.has(gatewayKey(name, resource.namespace))) continue;
        context.report('ReferencedResourceNotFound', resource, `Referenced gateway not found: "${name}"`);
      }
      const hosts = resource.object.spec.hosts ?? [];
      for (const name of resource.object.spec.gateways ?? []) {
        if (name === MESH_GATEWAY) continue;
        const key = gatewayKey(name, resource.namespace);
        const served = hostsFor(gateways.get(key), resource.namespace);
        if (served.some((host) => hosts.some((mine) => hostsOverlap(host, mine)))) continue;
        const message = `one or more host [${hosts.join(' ')}] defined in VirtualService ${resource.namespace}/${resource.name} not found in Gateway ${key}.`;
        context.report('VirtualServiceHostNotFoundInGateway', resource, message);
      }
    }
  },
};
