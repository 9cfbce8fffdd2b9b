import type { Generator } from '../generator.js';
import { LISTENER_TYPE, ROUTE_TYPE } from '../type-urls.js';
import { gatewayServersByPort, httpsRouteName, serverKind, virtualServicesOf, type GatewayServerEntry } from './gateway-config.js';
import { buildGatewayListeners, type BuildGatewayListenersOptions } from './gateway-listeners.js';
import type { PushContext } from './push-context.js';
import { buildVirtualServiceRoutes, type RouteResource } from './virtual-service-routes.js';
import type { Proxy } from '../proxy.js';

/** LDS for gateways: every listener each full push. */
export function newGatewayLdsGenerator(options: BuildGatewayListenersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      return { resources: buildGatewayListeners(proxy, push, options).map((listener) => ({ name: listener.name, resource: listener })) };
    },
  };
}

function routeConfiguration(proxy: Proxy, push: PushContext, name: string, port: number, entries: readonly GatewayServerEntry[]): object {
  const hosts = new Map<string, RouteResource[]>();
  for (const entry of entries) {
    for (const { host, virtualService } of virtualServicesOf(push, entry)) {
      const routes = buildVirtualServiceRoutes({ proxy, push, virtualService, port });
      hosts.set(host, [...(hosts.get(host) ?? []), ...routes]);
    }
  }
  const virtualHosts = [...hosts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([host, routes]) => ({ name: `${host}:${port}`, domains: [host], routes }));
  return {
    name,
    virtual_hosts: virtualHosts.length > 0 ? virtualHosts : [{ name: `blackhole:${port}`, domains: ['*'] }],
    validate_clusters: { value: false },
    ignore_port_in_host_matching: true,
  };
}

/**
 * RDS for gateways: `http.<port>` from the VirtualServices bound to the HTTP servers of that port,
 * `https.<port>.<name>.<gateway>.<ns>` for one HTTPS server; a vhost per intersecting host, a
 * blackhole vhost (404) when nothing binds.
 */
export function newGatewayRdsGenerator(): Generator<PushContext> {
  return {
    typeUrl: ROUTE_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const byPort = gatewayServersByPort(push, proxy);
      const resources = [];
      for (const [port, entries] of byPort) {
        const http = entries.filter((entry) => serverKind(entry.server) === 'http');
        const name = `http.${port}`;
        if (http.length > 0 && (request.names.length === 0 || request.names.includes(name))) resources.push({ name, resource: routeConfiguration(proxy, push, name, port, http) });
        for (const entry of entries.filter((candidate) => serverKind(candidate.server) === 'https')) {
          const httpsName = httpsRouteName(entry);
          if (request.names.length === 0 || request.names.includes(httpsName)) resources.push({ name: httpsName, resource: routeConfiguration(proxy, push, httpsName, port, [entry]) });
        }
      }
      return { resources };
    },
  };
}
