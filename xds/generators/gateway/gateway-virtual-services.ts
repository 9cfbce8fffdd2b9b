import type { HttpRoute, RouteDestination, TcpRoute, TlsRoute, VirtualService } from '../../../crds/index.js';
import type { Proxy } from '../../proxy.js';
import type { GatewayServerEntry } from './gateway-config.js';
import type { IndexedVirtualService, PushContext } from '../../model/push-context.js';
import { isVisibleTo } from '../../model/virtual-service-selection.js';

/**
 * A gateway name as a VirtualService writes it, resolved to `<namespace>/<name>`: `name` and
 * `./name` are in the VirtualService's namespace, the legacy `name.namespace[.svc…]` form
 * names its namespace, `mesh` stays `mesh`.
 */
export function resolveGatewayName(name: string, namespace: string): string {
  if (name === 'mesh') return name;
  const slash = name.indexOf('/');
  if (slash >= 0) return name.slice(0, slash) === '.' ? `${namespace}/${name.slice(slash + 1)}` : name;
  const dot = name.indexOf('.');
  if (dot < 0) return `${namespace}/${name}`;
  const rest = name.slice(dot + 1);
  const end = rest.indexOf('.');
  return `${end < 0 ? rest : rest.slice(0, end)}/${name.slice(0, dot)}`;
}

function namesGateway(names: readonly string[] | undefined, namespace: string, gateway: string): boolean {
  return (names ?? []).some((name) => resolveGatewayName(name, namespace) === gateway);
}

/** The VirtualServices bound to one Gateway (`<namespace>/<name>`) that the proxy may see under their `exportTo`. */
export function virtualServicesForGateway(push: PushContext, proxy: Proxy | undefined, gateway: string): IndexedVirtualService[] {
  return push.virtualServices.filter(
    (entry) => namesGateway(entry.virtualService.spec.gateways, entry.namespace, gateway) && (!proxy || isVisibleTo(entry, proxy)),
  );
}

/** The more specific of two hosts when they overlap (wildcards `*` and `*.suffix`), else undefined. */
export function intersectHosts(a: string, b: string): string | undefined {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return x;
  if (x === '*') return y;
  if (y === '*') return x;
  if (x.startsWith('*.') && y.endsWith(x.slice(1))) return y;
  if (y.startsWith('*.') && x.endsWith(y.slice(1))) return x;
  return undefined;
}

/**
 * A server host with its namespace part applied: `ns/host` only admits VirtualServices of `ns`
 * (`.` is the Gateway's namespace, `*` any); undefined when the VirtualService is not admitted.
 */
function admittedHost(serverHost: string, gatewayNamespace: string, virtualServiceNamespace: string): string | undefined {
  const slash = serverHost.indexOf('/');
  if (slash < 0) return serverHost;
  const namespace = serverHost.slice(0, slash);
  const resolved = namespace === '.' ? gatewayNamespace : namespace;
  return resolved === '*' || resolved === virtualServiceNamespace ? serverHost.slice(slash + 1) : undefined;
}

/** The hosts a VirtualService serves on a server: its hosts intersected with the server's, lower-cased, without repeats. */
export function intersectingHosts(entry: GatewayServerEntry, virtualService: IndexedVirtualService): string[] {
  const out = new Set<string>();
  for (const serverHost of entry.server.hosts) {
    const host = admittedHost(serverHost, entry.gateway.namespace, virtualService.namespace);
    if (host === undefined) continue;
    for (const vsHost of virtualService.hosts) {
      const matched = intersectHosts(host, vsHost);
      if (matched !== undefined) out.add(matched);
    }
  }
  return [...out];
}

/** The virtual hosts of one server: each VirtualService bound to its Gateway, with each host it shares with the server. */
export function virtualServicesOf(push: PushContext, entry: GatewayServerEntry, proxy?: Proxy): { host: string; virtualService: IndexedVirtualService }[] {
  const gateway = `${entry.gateway.namespace}/${entry.gateway.name}`;
  return virtualServicesForGateway(push, proxy, gateway).flatMap((virtualService) =>
    intersectingHosts(entry, virtualService).map((host) => ({ host, virtualService })),
  );
}

/**
 * The VirtualService as one Gateway sees it: http matches naming other gateways dropped (a
 * route left with none is dropped whole, never widened to a catch-all), the `gateways` of the
 * matches kept removed so the shared route builder treats them as applying.
 */
export function virtualServiceForGateway(entry: IndexedVirtualService, gateway: string): IndexedVirtualService {
  const http = entry.virtualService.spec.http;
  if (!http?.some((route) => route.match?.some((match) => (match.gateways ?? []).length > 0))) return entry;
  const routes: HttpRoute[] = [];
  for (const route of http) {
    if (!route.match || route.match.length === 0) {
      routes.push(route);
      continue;
    }
    const matches = route.match
      .filter((match) => (match.gateways ?? []).length === 0 || namesGateway(match.gateways, entry.namespace, gateway))
      .map(({ gateways: _gateways, ...match }) => match);
    if (matches.length > 0) routes.push({ ...route, match: matches });
  }
  const virtualService: VirtualService = { ...entry.virtualService, spec: { ...entry.virtualService.spec, http: routes } };
  return { ...entry, virtualService };
}

/** An L4 match applies to a server when its port (if any) is the server's and its gateways (if any) name the server's Gateway. */
function l4MatchApplies(
  match: NonNullable<TcpRoute['match']>[number] | TlsRoute['match'][number],
  virtualServiceNamespace: string,
  entry: GatewayServerEntry,
): boolean {
  if (match.port !== undefined && match.port !== entry.server.port.number) return false;
  const gateways = match.gateways ?? [];
  return gateways.length === 0 || namesGateway(gateways, virtualServiceNamespace, `${entry.gateway.namespace}/${entry.gateway.name}`);
}

function sharesAHost(entry: GatewayServerEntry, virtualService: IndexedVirtualService): boolean {
  return intersectingHosts(entry, virtualService).length > 0;
}

/** Where a TCP (or TLS-terminating) server sends its bytes: the first applicable `tcp` route of the bound VirtualServices. */
export function tcpRouteFor(
  push: PushContext,
  proxy: Proxy,
  entry: GatewayServerEntry,
): { virtualService: IndexedVirtualService; route: readonly RouteDestination[] } | undefined {
  for (const virtualService of virtualServicesForGateway(push, proxy, `${entry.gateway.namespace}/${entry.gateway.name}`)) {
    if (!sharesAHost(entry, virtualService)) continue;
    for (const tcp of virtualService.virtualService.spec.tcp ?? []) {
      const matches = tcp.match ?? [];
      const applies = matches.length === 0 || matches.some((match) => l4MatchApplies(match, virtualService.namespace, entry));
      if (applies && (tcp.route ?? []).length > 0) return { virtualService, route: tcp.route ?? [] };
    }
  }
  return undefined;
}

/** One SNI-routed chain of a passthrough server. */
export interface TlsRouteTarget {
  readonly virtualService: IndexedVirtualService;
  readonly sniHosts: readonly string[];
  readonly route: readonly RouteDestination[];
}

/** The `tls` routes of the bound VirtualServices for a passthrough server: one target per applicable match. */
export function tlsRoutesFor(push: PushContext, proxy: Proxy, entry: GatewayServerEntry): TlsRouteTarget[] {
  const out: TlsRouteTarget[] = [];
  for (const virtualService of virtualServicesForGateway(push, proxy, `${entry.gateway.namespace}/${entry.gateway.name}`)) {
    if (!sharesAHost(entry, virtualService)) continue;
    for (const tls of virtualService.virtualService.spec.tls ?? []) {
      if ((tls.route ?? []).length === 0) continue;
      for (const match of tls.match) {
        if (l4MatchApplies(match, virtualService.namespace, entry)) out.push({ virtualService, sniHosts: match.sniHosts, route: tls.route ?? [] });
      }
    }
  }
  return out;
}
