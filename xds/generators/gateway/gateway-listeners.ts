import type { Http10Options } from '../http10.js';
import type { DelayedCloseOptions } from '../delayed-close.js';
import type { RouteDestination } from '../../../crds/index.js';
import type { Proxy } from '../../proxy.js';
import { gatewayLabelsOf, mergeGateways, type GatewayListenerSpec, type GatewaySelectionOptions, type GatewayServerEntry } from './gateway-config.js';
import { buildServerTlsContext } from './gateway-tls.js';
import { tcpRouteFor, tlsRoutesFor, type TlsRouteTarget } from './gateway-virtual-services.js';
import {
  ADS_SOURCE,
  httpConnectionManager,
  pathNormalizationOptions,
  ROUTER_FILTER,
  TCP_PROXY_FILTER,
  TCP_PROXY_TYPE,
  tcpProxy,
  telemetryFilters,
} from '../http-connection-manager.js';
import { workloadOfProxy } from '../proxy-workload.js';
import type { IndexedVirtualService, PushContext } from '../../model/push-context.js';
import { NO_SECURITY_FILTERS, type SecurityFilterInput, type SecurityFilters, type TypedFilter } from '../../model/security-filters.js';
import type { ListenerResource } from '../sidecar/sidecar-listeners.js';
import { destinationCluster } from '../virtual-service-routes.js';

export interface BuildGatewayListenersOptions extends GatewaySelectionOptions, Http10Options, DelayedCloseOptions {
  /** jwt_authn and RBAC in every HTTP connection manager of the gateway, network RBAC before every tcp_proxy. */
  readonly securityFilters?: SecurityFilters;
  /** MESH_GATEWAY_STRIP_HOST_PORT: drop the port of Host/:authority before filters and routing. */
  readonly stripHostPort?: boolean;
}

const TLS_INSPECTOR = {
  name: 'envoy.filters.listener.tls_inspector',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' },
};
const XFCC_MODES = new Set(['SANITIZE', 'FORWARD_ONLY', 'APPEND_FORWARD', 'SANITIZE_SET', 'ALWAYS_FORWARD_ONLY']);

/** `gatewayTopology` of the proxy's own config (node metadata PROXY_CONFIG), else of the mesh's `defaultConfig`. */
interface GatewayTopology {
  readonly numTrustedProxies: number;
  readonly forwardClientCertDetails: string;
}

function gatewayTopologyOf(push: PushContext, proxy: Proxy): GatewayTopology {
  const fromProxy = asRecord(asRecord(proxy.metadata.raw['PROXY_CONFIG'])?.['gatewayTopology']);
  const fromMesh = asRecord((push.meshConfig.defaultConfig as Record<string, unknown>)['gatewayTopology']);
  const pick = (key: string): unknown => fromProxy?.[key] ?? fromMesh?.[key];
  const hops = Number(pick('numTrustedProxies') ?? 0);
  const xfcc = String(pick('forwardClientCertDetails') ?? '').toUpperCase();
  return {
    numTrustedProxies: Number.isInteger(hops) && hops > 0 ? hops : 0,
    // UNDEFINED (or anything unknown) keeps the gateway default.
    forwardClientCertDetails: XFCC_MODES.has(xfcc) ? xfcc : 'SANITIZE_SET',
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

interface ListenerContext {
  readonly proxy: Proxy;
  readonly push: PushContext;
  readonly options: BuildGatewayListenersOptions;
  readonly security: SecurityFilters;
  readonly topology: GatewayTopology;
  readonly input: (port: number) => SecurityFilterInput;
}

/**
 * The HTTP connection manager of a gateway: the edge of the mesh. The client address is the
 * peer's (`use_remote_address`), no peer counts as internal so `x-envoy-*` headers from outside
 * are dropped, XFCC from outside is replaced by what this hop sees (SANITIZE_SET unless the
 * gateway topology says otherwise), paths normalized as the mesh config says; policy filters,
 * then the router.
 */
function gatewayHcm(context: ListenerContext, statPrefix: string, routeName: string, serverPort: number): TypedFilter {
  const xfcc = context.topology.forwardClientCertDetails;
  return httpConnectionManager({
    stat_prefix: statPrefix,
    rds: { route_config_name: routeName, config_source: ADS_SOURCE },
    http_filters: [...context.security.http(context.input(serverPort)), ...telemetryFilters('gateway'), ROUTER_FILTER],
    use_remote_address: { value: true },
    ...(context.topology.numTrustedProxies > 0 ? { xff_num_trusted_hops: context.topology.numTrustedProxies } : {}),
    // Explicitly empty: older Envoy treated RFC 1918 peers as internal and kept their x-envoy-* headers.
    internal_address_config: {},
    forward_client_cert_details: xfcc,
    ...(xfcc === 'SANITIZE_SET' || xfcc === 'APPEND_FORWARD'
      ? { set_current_client_cert_details: { subject: { value: true }, cert: true, dns: true, uri: true } }
      : {}),
    ...(context.options.stripHostPort ? { strip_any_host_port: true } : {}),
    ...pathNormalizationOptions(context.push.meshConfig),
  });
}

/** tcp_proxy to one destination, or split by weight over several. */
function tcpProxyTo(
  context: ListenerContext,
  virtualService: IndexedVirtualService,
  route: readonly RouteDestination[],
  serverPort: number,
): TypedFilter | undefined {
  const destinations = route.filter((destination) => route.length === 1 || (destination.weight ?? 0) > 0);
  const clusterOf = (destination: RouteDestination): string =>
    destinationCluster(
      { proxy: context.proxy, push: context.push, virtualService, port: serverPort },
      destination.destination.host,
      destination.destination.subset,
      destination.destination.port?.number,
    );
  const [only] = destinations;
  if (!only) return undefined;
  if (destinations.length === 1) return tcpProxy(clusterOf(only), clusterOf(only));
  return {
    name: TCP_PROXY_FILTER,
    typed_config: {
      '@type': TCP_PROXY_TYPE,
      stat_prefix: `${virtualService.name}.${virtualService.namespace}`,
      weighted_clusters: { clusters: destinations.map((destination) => ({ name: clusterOf(destination), weight: destination.weight ?? 0 })) },
    },
  };
}

/** The SNI names a TLS server answers: its hosts without namespace parts; none (any name) when one of them is `*`. */
function serverNames(entry: GatewayServerEntry): string[] {
  const hosts = [...new Set(entry.server.hosts.map((host) => host.slice(host.indexOf('/') + 1)))].sort();
  return hosts.includes('*') ? [] : hosts;
}

function sniMatch(names: readonly string[]): object {
  return names.length > 0 ? { server_names: [...names] } : {};
}

function chainsOf(context: ListenerContext, listener: GatewayListenerSpec): object[] {
  const chains: object[] = [];
  const httpServers = listener.servers.filter((entry) => entry.kind === 'http');
  const [firstHttp] = httpServers;
  if (firstHttp?.routeName !== undefined) {
    chains.push({ name: firstHttp.routeName, filters: [gatewayHcm(context, `outbound_${listener.name}`, firstHttp.routeName, firstHttp.server.port.number)] });
  }
  const sniTaken = new Set<string>();
  for (const entry of listener.servers) {
    const port = entry.server.port.number;
    switch (entry.kind) {
      case 'https': {
        if (!entry.server.tls || entry.routeName === undefined) break;
        chains.push({
          name: entry.routeName,
          filter_chain_match: sniMatch(serverNames(entry)),
          transport_socket: buildServerTlsContext(entry.server.tls, { http: true }),
          filters: [gatewayHcm(context, entry.server.name || `outbound_${listener.name}`, entry.routeName, port)],
        });
        break;
      }
      case 'tls-terminate':
      case 'tcp': {
        const target = tcpRouteFor(context.push, context.proxy, entry);
        const proxyFilter = target ? tcpProxyTo(context, target.virtualService, target.route, port) : undefined;
        if (!proxyFilter) break;
        const filters = [...context.security.tcp(context.input(port)), proxyFilter];
        if (entry.kind === 'tcp' || !entry.server.tls) chains.push({ name: `tcp.${listener.name}`, filters });
        else
          chains.push({
            name: `tls.${port}.${entry.server.port.name}.${entry.gateway.name}.${entry.gateway.namespace}`,
            filter_chain_match: sniMatch(serverNames(entry)),
            transport_socket: buildServerTlsContext(entry.server.tls, { http: false }),
            filters,
          });
        break;
      }
      case 'passthrough':
        chains.push(...passthroughChains(context, entry, sniTaken));
        break;
      default:
        // http: the shared chain above; auto-passthrough (SNI-DNAT to every service): not built.
        break;
    }
  }
  return chains;
}

/** One chain per applicable `tls` match of the bound VirtualServices, on its SNI names; a name already routed on the port is skipped. */
function passthroughChains(context: ListenerContext, entry: GatewayServerEntry, sniTaken: Set<string>): object[] {
  const port = entry.server.port.number;
  return tlsRoutesFor(context.push, context.proxy, entry).flatMap((target: TlsRouteTarget) => {
    if (target.sniHosts.some((host) => sniTaken.has(host))) return [];
    const proxyFilter = tcpProxyTo(context, target.virtualService, target.route, port);
    if (!proxyFilter) return [];
    for (const host of target.sniHosts) sniTaken.add(host);
    return [
      {
        name: `passthrough.${port}.${target.sniHosts.join(',')}`,
        filter_chain_match: sniMatch(target.sniHosts),
        filters: [...context.security.tcp(context.input(port)), proxyFilter],
      },
    ];
  });
}

function socketAddress(address: string, port: number): object {
  return { socket_address: { address, port_value: port } };
}

/**
 * The listeners of a gateway: one bound `<bind>_<port>` (bind `0.0.0.0` unless the server says)
 * per port of the merged Gateway servers selecting it. HTTP servers share a chain routed by
 * RDS `http.<port>`; terminating HTTPS servers get a chain per server on their SNI names with
 * RDS `https.<port>.<name>.<gateway>.<ns>`; TLS-terminating and TCP servers a tcp_proxy to the
 * bound VirtualService's `tcp` route; PASSTHROUGH servers a tcp_proxy chain per `tls` route
 * match on its SNI names. A port with no chain gets no listener. AUTO_PASSTHROUGH is not built.
 */
export function buildGatewayListeners(proxy: Proxy, push: PushContext, options: BuildGatewayListenersOptions = {}): ListenerResource[] {
  return buildGatewayListenerSpecs(proxy, push, options).map(({ listener }) => listener);
}

/** The listeners with the merged servers each is built from (the generator keys its cache on them). */
export function buildGatewayListenerSpecs(
  proxy: Proxy,
  push: PushContext,
  options: BuildGatewayListenersOptions = {},
): { spec: GatewayListenerSpec; listener: ListenerResource }[] {
  const workload = workloadOfProxy(push, proxy);
  const labels = gatewayLabelsOf(push, proxy);
  const namespace = workload?.namespace ?? proxy.configNamespace;
  const context: ListenerContext = {
    proxy,
    push,
    options,
    security: options.securityFilters ?? NO_SECURITY_FILTERS,
    topology: gatewayTopologyOf(push, proxy),
    input: (port) => ({ proxy, push, ...(workload ? { workload } : {}), namespace, labels, port, kind: 'gateway' }),
  };
  const out: { spec: GatewayListenerSpec; listener: ListenerResource }[] = [];
  for (const spec of mergeGateways(push, proxy, options).listeners) {
    const chains = chainsOf(context, spec);
    if (chains.length === 0) continue;
    const inspectsTls = chains.some((chain) => 'filter_chain_match' in chain || 'transport_socket' in chain);
    out.push({
      spec,
      listener: {
        name: spec.name,
        address: socketAddress(spec.bind, spec.port),
        traffic_direction: 'OUTBOUND',
        ...(inspectsTls ? { listener_filters: [TLS_INSPECTOR] } : {}),
        filter_chains: chains,
      },
    });
  }
  return out;
}
