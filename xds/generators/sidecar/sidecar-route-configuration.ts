import type { Service } from '../../../controllers/index.js';
import type { Proxy } from '../../proxy.js';
import { outboundClusterName } from '../cluster-names.js';
import type { PushContext } from '../push-context.js';
import { defaultRetryPolicy } from '../route-retry-policy.js';
import { isHttpRoutable } from '../service-port-protocol.js';
import { buildVirtualHostDomains } from '../virtual-host-domains.js';
import { buildVirtualServiceRoutes, type RouteResource } from '../virtual-service-routes.js';
import { virtualServiceFor } from '../virtual-service-selection.js';

/** An Envoy `RouteConfiguration` message in snake_case. */
export type RouteConfigurationResource = { readonly name: string } & Readonly<Record<string, unknown>>;

const NO_TIMEOUT = { seconds: 0 } as const;

/** The sidecar's outbound route name for a port is the port number; undefined for any other name. */
export function parseSidecarRouteName(name: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(name)) return undefined;
  const port = Number(name);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * The route configuration a sidecar's outbound HTTP listener on a port asks for (route name
 * `"<port>"`): one virtual host `<fqdn>:<port>` per service with an HTTP (or sniffed) port of that
 * number, sorted by host. A mesh VirtualService for the host replaces the default route with its
 * own http routes; one that yields no route for this port leaves the host out, as the reference.
 * A name that is no port gets an empty configuration.
 */
export function buildSidecarRouteConfiguration(proxy: Proxy, push: PushContext, routeName: string): RouteConfigurationResource {
  const port = parseSidecarRouteName(routeName);
  const virtualHosts: object[] = [];
  if (port !== undefined) {
    for (const service of push.services) {
      if (!service.ports.some((servicePort) => servicePort.port === port && isHttpRoutable(servicePort))) continue;
      const routes = routesFor(proxy, push, service, port);
      if (routes.length === 0) continue;
      virtualHosts.push({
        name: `${service.hostname}:${port}`,
        domains: buildVirtualHostDomains(service, port, proxy),
        routes,
        include_request_attempt_count: true,
      });
    }
  }
  return { name: routeName, virtual_hosts: virtualHosts, validate_clusters: { value: false } };
}

function routesFor(proxy: Proxy, push: PushContext, service: Service, port: number): RouteResource[] {
  const virtualService = virtualServiceFor(push, proxy, service.hostname);
  if (virtualService) return buildVirtualServiceRoutes({ proxy, push, virtualService, port });
  return [buildDefaultRoute(service.hostname, port)];
}

/** The route of a host without a VirtualService: everything to its service cluster, with the default retries. */
export function buildDefaultRoute(hostname: string, port: number): RouteResource {
  return {
    name: 'default',
    match: { prefix: '/' },
    route: { cluster: outboundClusterName(port, '', hostname), timeout: NO_TIMEOUT, retry_policy: defaultRetryPolicy(), max_grpc_timeout: NO_TIMEOUT },
    decorator: { operation: `${hostname}:${port}/*` },
  };
}
