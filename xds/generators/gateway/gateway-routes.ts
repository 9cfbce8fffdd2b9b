import type { Proxy } from '../../proxy.js';
import { gatewayKey, type GatewayServerEntry } from './gateway-config.js';
import { intersectingHosts, virtualServiceForGateway, virtualServicesForGateway } from './gateway-virtual-services.js';
import type { PushContext } from '../../model/push-context.js';
import type { RouteConfigurationResource } from '../sidecar/sidecar-route-configuration.js';
import { buildVirtualServiceRoutes, type RouteResource, type VirtualServiceRouteOptions } from '../virtual-service-routes.js';

export interface BuildGatewayRoutesOptions extends VirtualServiceRouteOptions {
  /** PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION (default true): hosts with identical routes share one virtual host. */
  readonly collapseRoutes?: boolean;
}

interface VirtualHostDraft {
  readonly host: string;
  readonly port: number;
  routes: RouteResource[];
  requireTls: boolean;
}

function isCatchAll(route: RouteResource): boolean {
  const match = route['match'] as Record<string, unknown> | undefined;
  return match?.['prefix'] === '/' && match['headers'] === undefined && match['query_parameters'] === undefined;
}

/** Catch-all routes last (stable otherwise), so routes appended from a later VirtualService stay reachable. */
function sortRoutes(routes: readonly RouteResource[]): RouteResource[] {
  return [...routes.filter((route) => !isCatchAll(route)), ...routes.filter(isCatchAll)];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The route configuration of one gateway RDS name (`http.<port>` or `https.…`): for each of
 * its servers, the VirtualServices bound to the server's Gateway, one virtual host
 * `<host>:<server port>` (domains `[host]`, the port ignored in matching) per host they share
 * with the server; routes of several VirtualServices on one host are appended. `httpsRedirect`
 * servers require TLS on all their hosts. Without any virtual host, a `blackhole:<port>` host
 * with no routes answers 404; without any server (a Gateway just removed), the configuration
 * is empty.
 */
export function buildGatewayRouteConfiguration(
  proxy: Proxy,
  push: PushContext,
  name: string,
  servers: readonly GatewayServerEntry[],
  options: BuildGatewayRoutesOptions = {},
): RouteConfigurationResource {
  if (servers.length === 0) return { name, virtual_hosts: [], validate_clusters: { value: false } };
  const drafts = new Map<string, VirtualHostDraft>();
  for (const entry of servers) {
    const port = entry.server.port.number;
    const key = gatewayKey(entry.gateway);
    const redirect = entry.server.tls?.httpsRedirect === true;
    for (const bound of virtualServicesForGateway(push, proxy, key)) {
      const hosts = intersectingHosts(entry, bound);
      if (hosts.length === 0) continue;
      const routes = buildVirtualServiceRoutes({
        ...(options.defaultRequestTimeoutMs !== undefined ? { defaultRequestTimeoutMs: options.defaultRequestTimeoutMs } : {}),
        proxy,
        push,
        virtualService: virtualServiceForGateway(bound, key),
        port,
      });
      for (const host of hosts) {
        const draft = drafts.get(host);
        if (draft) {
          draft.routes.push(...routes);
          draft.requireTls ||= redirect;
        } else drafts.set(host, { host, port, routes: [...routes], requireTls: redirect });
      }
    }
    if (redirect) {
      for (const serverHost of entry.server.hosts) {
        const host = serverHost.slice(serverHost.indexOf('/') + 1).toLowerCase();
        const draft = drafts.get(host);
        if (draft) draft.requireTls = true;
        else drafts.set(host, { host, port, routes: [], requireTls: true });
      }
    }
  }
  const [first] = servers;
  const virtualHosts =
    drafts.size === 0
      ? [{ name: `blackhole:${first?.server.port.number ?? 0}`, domains: ['*'] }]
      : collapse(
          [...drafts.values()].sort((a, b) => compare(a.host, b.host)),
          options.collapseRoutes !== false,
        );
  return {
    name,
    virtual_hosts: virtualHosts,
    validate_clusters: { value: false },
    ignore_port_in_host_matching: true,
  };
}

/** Virtual hosts in host order; with `merge`, a host whose routes equal an earlier host's joins its domains. */
function collapse(drafts: readonly VirtualHostDraft[], merge: boolean): object[] {
  const out: { name: string; domains: string[]; routes: RouteResource[]; requireTls: boolean; key: string }[] = [];
  for (const draft of drafts) {
    const routes = sortRoutes(draft.routes);
    const key = JSON.stringify(routes);
    const same = merge ? out.find((host) => host.key === key && host.requireTls === draft.requireTls) : undefined;
    if (same) same.domains.push(draft.host);
    else out.push({ name: `${draft.host}:${draft.port}`, domains: [draft.host], routes, requireTls: draft.requireTls, key });
  }
  return out.map(({ name, domains, routes, requireTls }) => ({
    name,
    domains,
    ...(routes.length > 0 ? { routes } : {}),
    ...(requireTls ? { require_tls: 'ALL' } : {}),
  }));
}
