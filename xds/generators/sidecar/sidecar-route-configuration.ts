import type { Proxy } from '../../proxy.js';
import { withPartKey } from '../../envoy/encoded-parts.js';
import { outboundClusterName } from '../../model/cluster-names.js';
import type { PushContext } from '../../model/push-context.js';
import type { PushFindings } from '../../push/push-findings.js';
import { defaultRetryPolicy } from '../route-retry-policy.js';
import { isHttpRoutable } from '../../model/service-port-protocol.js';
import { buildVirtualHostDomains } from '../virtual-host-domains.js';
import { buildVirtualServiceRoutes, type RouteResource, type VirtualServiceRouteOptions } from '../virtual-service-routes.js';
import { virtualServiceFor } from '../../model/virtual-service-selection.js';
import { visibleServices } from '../../model/service-visibility.js';

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
 * A domain an earlier virtual host serves is left out (reported to `findings`). A name that is no
 * port gets an empty configuration.
 */
export function buildSidecarRouteConfiguration(
  proxy: Proxy,
  push: PushContext,
  routeName: string,
  sharedHosts: Map<string, object> = new Map(),
  options: VirtualServiceRouteOptions = {},
  findings?: PushFindings,
): RouteConfigurationResource {
  const port = parseSidecarRouteName(routeName);
  const virtualHosts: object[] = [];
  // Envoy refuses a domain served by two virtual hosts: the first keeps it, as the reference.
  const served = new Set<string>();
  if (port !== undefined) {
    for (const service of visibleServices(push, proxy.configNamespace)) {
      if (!service.ports.some((servicePort) => servicePort.port === port && isHttpRoutable(servicePort))) continue;
      const virtualService = virtualServiceFor(push, proxy, service.hostname);
      const all = buildVirtualHostDomains(service, port, proxy);
      const domains = all.filter((domain) => !served.has(domain));
      if (domains.length < all.length) findings?.add('duplicate-domain', `${service.hostname}:${port}`);
      if (domains.length === 0) continue;
      if (!virtualService) {
        for (const domain of domains) served.add(domain);
        virtualHosts.push(defaultVirtualHost(service.hostname, port, domains, sharedHosts));
        continue;
      }
      const routes = buildVirtualServiceRoutes({ ...options, proxy, push, virtualService, port });
      if (routes.length === 0) continue;
      for (const domain of domains) served.add(domain);
      virtualHosts.push({ name: `${service.hostname}:${port}`, domains, routes, include_request_attempt_count: true });
    }
  }
  return { name: routeName, virtual_hosts: virtualHosts, validate_clusters: { value: false } };
}

/**
 * The virtual host of a service without a VirtualService: the same for every proxy that sees the
 * same domains (every namespace but the service's own), so one object per push is handed to all
 * of them, its key (port and domains) given as its part key: the encoding layer encodes it once
 * per push.
 */
function defaultVirtualHost(hostname: string, port: number, domains: string[], sharedHosts: Map<string, object>): object {
  const key = `${port}\n${domains.join('\n')}`;
  let host = sharedHosts.get(key);
  if (!host) {
    host = withPartKey({ name: `${hostname}:${port}`, domains, routes: [buildDefaultRoute(hostname, port)], include_request_attempt_count: true }, key);
    sharedHosts.set(key, host);
  }
  return host;
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
