import { compileClientCertHeader, XFCC_HEADER, type ClientCertHeaderConfig } from './client-cert-header.js';
import { compiling, ConfigRejection } from './config-rejection.js';
import type { HttpDecision, RequestContext, TcpDecision, UpstreamChooser, UpstreamDecision } from './decision-types.js';
import { compileAccessLogs, type AccessLogSink } from './access-log.js';
import { DOWNSTREAM_TLS_TYPE, HCM_TYPE, INSPECTOR_TYPES, RAW_BUFFER_TYPE, type TypedConfig } from './envoy-types.js';
import type { ConnectionFacts, HttpRequestFacts } from './facts.js';
import { selectFilterChain, type FilterChainMatchConfig } from './filter-chain-match.js';
import { compileHttpFilterChain } from './http-filter-chain.js';
import { compilePathNormalization, type PathNormalizationConfig } from './path-normalization.js';
import { compileRouteConfiguration, type RouteConfigurationConfig } from './route-configuration.js';
import { compileTcpChain } from './tcp-chain.js';
import { compileForwardedFor, type ForwardedForConfig } from './forwarded-for.js';
import { timeoutMs, type DurationConfig } from './duration.js';
import { compileUpstreamTls, decodeCommonTlsContext, type ClusterTlsConfig, type CommonTlsContext, type TlsContextSettings } from './upstream-tls.js';

export type { HttpDecision, RequestContext, TcpDecision, UpstreamChooser, UpstreamDecision } from './decision-types.js';

interface SocketAddress {
  socket_address?: { address: string; port_value?: number };
}

export interface FilterChainConfig {
  name?: string;
  filter_chain_match?: FilterChainMatchConfig;
  filters?: TypedConfig[];
  transport_socket?: TypedConfig;
}

/** `envoy.config.listener.v3.Listener` (what the data plane reads). */
export interface ListenerConfig {
  name: string;
  address?: SocketAddress;
  filter_chains?: FilterChainConfig[];
  default_filter_chain?: FilterChainConfig;
  listener_filters?: TypedConfig[];
  use_original_dst?: boolean | { value: boolean };
  bind_to_port?: boolean | { value: boolean };
}

export interface ClusterConfig extends ClusterTlsConfig {
  type?: string;
  eds_cluster_config?: { service_name?: string };
  load_assignment?: ClusterLoadAssignmentConfig;
}

export interface LbEndpointConfig {
  endpoint?: { address?: SocketAddress };
  health_status?: string | number;
  metadata?: { filter_metadata?: Record<string, unknown> };
}

export interface ClusterLoadAssignmentConfig {
  cluster_name: string;
  endpoints?: { lb_endpoints?: LbEndpointConfig[] }[];
}

/** Everything a proxy was given, by resource name. */
export interface ProxyResources {
  readonly listeners: readonly ListenerConfig[];
  readonly routes: ReadonlyMap<string, RouteConfigurationConfig>;
  readonly clusters: ReadonlyMap<string, ClusterConfig>;
  readonly endpoints: ReadonlyMap<string, ClusterLoadAssignmentConfig>;
}

export interface DownstreamTls extends TlsContextSettings {
  readonly requireClientCertificate: boolean;
}

export interface AcceptedChain {
  readonly kind: 'accept';
  readonly listener: string;
  readonly chain: string;
  readonly protocol: 'http' | 'tcp';
  readonly downstreamTls?: DownstreamTls;
  /** The access logs of its HTTP connection manager or TCP proxy. */
  readonly accessLogs: readonly AccessLogSink[];
  /** `http_protocol_options.accept_http_10`: HTTP/1.0 requests are served (Envoy answers them 426 Upgrade Required otherwise). */
  readonly acceptHttp10: boolean;
  http(request: HttpRequestFacts, context: RequestContext): Promise<HttpDecision>;
  tcp(context: RequestContext): Promise<TcpDecision>;
}

export type ConnectionDecision = { readonly kind: 'reset'; readonly listener?: string } | AcceptedChain;

export interface ProxyDecisions {
  /** Which listener takes a connection to this original destination (inbound: `virtualInbound`). */
  listenerFor(direction: 'inbound' | 'outbound', destinationAddress: string, destinationPort: number): string | undefined;
  /** The filter chain of a listener that accepts the connection, or a reset. */
  connection(listener: string, facts: ConnectionFacts): ConnectionDecision;
  /** An upstream of a cluster, by the proxy's clusters and endpoints (what an authorization server's calls go to). */
  upstream: UpstreamChooser;
}

const UNHEALTHY = new Set(['UNHEALTHY', 'DRAINING', 'TIMEOUT', 2, 3, 4]);

// The fields the data plane implements (or that change nothing it does): anything else is refused by name.
const LISTENER_FIELDS = new Set([
  'name',
  'address',
  'traffic_direction',
  'filter_chains',
  'default_filter_chain',
  'listener_filters',
  'use_original_dst',
  'bind_to_port',
  'continue_on_listener_filters_timeout',
  'listener_filters_timeout',
]);
const CHAIN_FIELDS = new Set(['name', 'filters', 'filter_chain_match', 'transport_socket']);
const MATCH_FIELDS = new Set(['server_names', 'prefix_ranges', 'destination_port', 'transport_protocol', 'application_protocols', 'source_prefix_ranges']);
const HCM_FIELDS = new Set([
  '@type',
  'stat_prefix',
  'rds',
  'route_config',
  'http_filters',
  'use_remote_address',
  'internal_address_config',
  'xff_num_trusted_hops',
  'forward_client_cert_details',
  'set_current_client_cert_details',
  'normalize_path',
  'merge_slashes',
  'path_with_escaped_slashes_action',
  'codec_type',
  'access_log',
  'http_protocol_options',
  // Accepted and checked; Node closes a downstream connection once its last response is written,
  // without Envoy's grace period for the client to close first (as 0s would).
  'delayed_close_timeout',
]);
const CLUSTER_FIELDS = new Set([
  'name',
  'type',
  'eds_cluster_config',
  'connect_timeout',
  'lb_policy',
  'load_assignment',
  'upstream_bind_config',
  'original_dst_lb_config',
  'dns_lookup_family',
  'dns_refresh_rate',
  'respect_dns_ttl',
  'transport_socket_matches',
  'transport_socket',
  'metadata',
]);

/** Refuses the first field of `value` outside `allowed`, naming it. */
function onlyFields(resource: string, prefix: string, value: object | undefined, allowed: ReadonlySet<string>): void {
  const unknown = Object.keys(value ?? {}).find((key) => !allowed.has(key));
  if (unknown) throw new ConfigRejection(resource, `${prefix}${unknown}`, 'is not supported');
}
const VIRTUAL_INBOUND = 'virtualInbound';

function flag(value: boolean | { value: boolean } | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  return typeof value === 'object' ? value.value : value;
}

function compileEndpoints(assignment: ClusterLoadAssignmentConfig | undefined): { address: string; port: number; metadata?: Record<string, unknown> }[] {
  const out: { address: string; port: number; metadata?: Record<string, unknown> }[] = [];
  for (const locality of assignment?.endpoints ?? []) {
    for (const lb of locality.lb_endpoints ?? []) {
      if (lb.health_status !== undefined && UNHEALTHY.has(lb.health_status)) continue;
      const socket = lb.endpoint?.address?.socket_address;
      if (!socket) continue;
      out.push({ address: socket.address, port: socket.port_value ?? 0, ...(lb.metadata?.filter_metadata ? { metadata: lb.metadata.filter_metadata } : {}) });
    }
  }
  return out;
}

/** Compiles the clusters and their endpoints into an upstream chooser. */
function compileUpstreams(resources: ProxyResources): UpstreamChooser {
  const compiled = new Map<string, (pick: number) => UpstreamDecision>();
  for (const [name, cluster] of resources.clusters) {
    onlyFields(`Cluster ${name}`, '', cluster, CLUSTER_FIELDS);
    const tlsFor = compiling(`Cluster ${name}`, 'transport_socket', () => compileUpstreamTls(cluster));
    const type = cluster.type ?? 'EDS';
    const lbPolicy = (cluster as { lb_policy?: string }).lb_policy ?? 'ROUND_ROBIN';
    // Least-request is approximated by round robin; hashing policies are not implemented.
    if (!['ROUND_ROBIN', 'LEAST_REQUEST', 'RANDOM', 'CLUSTER_PROVIDED'].includes(lbPolicy)) {
      throw new ConfigRejection(`Cluster ${name}`, 'lb_policy', `${lbPolicy} is not supported (ROUND_ROBIN, LEAST_REQUEST, RANDOM)`);
    }
    if (type === 'ORIGINAL_DST') {
      const override = (cluster as { original_dst_lb_config?: { upstream_port_override?: number | { value: number } } }).original_dst_lb_config
        ?.upstream_port_override;
      const portOverride = typeof override === 'object' ? override.value : override;
      compiled.set(name, () => ({ kind: 'original-destination', cluster: name, tls: tlsFor(undefined), ...(portOverride ? { portOverride } : {}) }));
      continue;
    }
    if (!['EDS', 'STATIC', 'STRICT_DNS', 'LOGICAL_DNS'].includes(type)) {
      throw new ConfigRejection(`Cluster ${name}`, 'type', `${type} is not supported (EDS, STATIC, STRICT_DNS, LOGICAL_DNS, ORIGINAL_DST)`);
    }
    const assignment = type === 'EDS' ? resources.endpoints.get(cluster.eds_cluster_config?.service_name || name) : cluster.load_assignment;
    // A DNS cluster's endpoints are names, resolved when a connection is made (the system resolver
    // and its cache standing in for Envoy's refresh); LOGICAL_DNS uses only the first, as Envoy does.
    const endpoints = type === 'LOGICAL_DNS' ? compileEndpoints(assignment).slice(0, 1) : compileEndpoints(assignment);
    compiled.set(name, (pick) => {
      if (endpoints.length === 0) return { kind: 'no-healthy-upstream', cluster: name };
      const endpoint = endpoints[pick % endpoints.length] as (typeof endpoints)[number];
      return { kind: 'endpoint', cluster: name, address: endpoint.address, port: endpoint.port, tls: tlsFor(endpoint.metadata) };
    });
  }
  return (cluster, pick) => compiled.get(cluster)?.(pick) ?? { kind: 'unknown-cluster', cluster };
}

function compileDownstreamTls(where: string, socket: TypedConfig | undefined): DownstreamTls | undefined {
  const type = socket?.typed_config?.['@type'];
  if (!socket || type === undefined || type === RAW_BUFFER_TYPE) return undefined;
  if (type !== DOWNSTREAM_TLS_TYPE) throw new ConfigRejection(where, 'transport_socket', `type ${type} is not supported`);
  const config = socket.typed_config as { common_tls_context?: CommonTlsContext; require_client_certificate?: boolean | { value: boolean } };
  return { ...decodeCommonTlsContext(config.common_tls_context ?? {}), requireClientCertificate: flag(config.require_client_certificate, false) };
}

interface HcmConfig extends PathNormalizationConfig, ClientCertHeaderConfig, ForwardedForConfig {
  rds?: { route_config_name: string };
  route_config?: RouteConfigurationConfig;
  http_filters?: TypedConfig[];
}

function compileHcm(where: string, config: HcmConfig, resources: ProxyResources, upstreams: UpstreamChooser, terminatesTls: boolean): AcceptedChain['http'] {
  const filters = compileHttpFilterChain(where, config.http_filters ?? []);
  const normalize = compilePathNormalization(config);
  const clientCert = compileClientCertHeader(config);
  const forwardedFor = compileForwardedFor(config);
  const inline = config.route_config
    ? compiling(where, 'route_config', () => compileRouteConfiguration(config.route_config as RouteConfigurationConfig))
    : undefined;
  const routeName = config.rds?.route_config_name;
  if (!inline && routeName === undefined) throw new ConfigRejection(where, 'route_specifier', 'needs rds or route_config');
  const rds = routeName === undefined ? undefined : resources.routes.get(routeName);
  const routed = inline ?? (rds ? compiling(`RouteConfiguration ${routeName}`, 'virtual_hosts', () => compileRouteConfiguration(rds)) : undefined);

  return async (incoming, context) => {
    const normalized = normalize(incoming.path);
    if (!normalized.ok) return { kind: 'respond', status: 400, body: 'Bad Request', by: 'path', rbac: [] };
    const headers: Record<string, string> = { ...incoming.headers };
    const forwarded = forwardedFor({
      headers,
      remoteAddress: context.connection.sourceAddress,
      localAddress: context.localAddress ?? context.connection.destinationAddress,
    });
    const headersToRemove: string[] = [...forwarded.remove];
    for (const name of forwarded.remove) delete headers[name];
    Object.assign(headers, forwarded.set);
    const xfcc = clientCert(incoming.headers[XFCC_HEADER], {
      ...(context.connection.peerCertificate ? { peerCertificate: context.connection.peerCertificate } : {}),
      ...(context.localUriSan ? { localUriSan: context.localUriSan } : {}),
    });
    const headersToSet: Record<string, string> = { ...forwarded.set };
    if (xfcc === undefined) {
      if (headers[XFCC_HEADER] !== undefined) headersToRemove.push(XFCC_HEADER);
      delete headers[XFCC_HEADER];
    } else {
      headers[XFCC_HEADER] = xfcc;
      headersToSet[XFCC_HEADER] = xfcc;
    }
    const request: HttpRequestFacts = { ...incoming, path: normalized.path, headers };
    const routeContext = { random: context.random, scheme: context.connection.transportProtocol === 'tls' ? ('https' as const) : ('http' as const) };
    const statCluster = (): string | undefined => {
      const route = routed?.(request, routeContext);
      return route?.kind === 'cluster' ? route.cluster : undefined;
    };
    const filtered = await filters({ request, edits: { headers, headersToSet, headersToRemove }, context, terminatesTls, statCluster });
    // The route is resolved before the filters in Envoy: a denial's access log names its cluster and route.
    if (filtered.kind === 'respond') return routed ? { ...filtered, route: routed(request, routeContext) } : filtered;
    const { metadata, responseHeaderMutations } = filtered;
    const optional = { ...(filtered.jwt ? { jwt: filtered.jwt } : {}), ...(filtered.extAuthz ? { extAuthz: filtered.extAuthz } : {}) };
    const rbac = filtered.rbac;
    if (!routed) return { kind: 'respond', status: 404, body: '', by: 'router', ...optional, rbac };
    // Routed after the filters, as when a filter clears the route cache (jwt_authn for claim-based routes).
    const route = routed(request, routeContext);
    switch (route.kind) {
      case 'cluster':
        return {
          kind: 'forward',
          route,
          upstream: upstreams(route.cluster, context.pick),
          path: route.path,
          host: route.host,
          headersToSet: { ...headersToSet, ...route.requestHeaders.set, ...appended(request.headers, route.requestHeaders.append) },
          headersToRemove: [...headersToRemove, ...route.requestHeaders.remove],
          ...(responseHeaderMutations.length > 0 ? { responseHeaderMutations } : {}),
          ...optional,
          rbac,
          metadata,
        };
      case 'redirect':
        return { kind: 'respond', status: route.status, body: '', by: 'router', headers: { location: route.location }, ...optional, rbac, route };
      case 'direct-response':
        return { kind: 'respond', status: route.status, body: route.body, by: 'router', ...optional, rbac, route };
      case 'non-forwarding':
        return { kind: 'respond', status: 200, body: '', by: 'router', ...optional, rbac, route };
      default:
        return { kind: 'respond', status: 404, body: '', by: 'router', ...optional, rbac, route };
    }
  };
}

/** Values appended to what the request already carries (comma-joined, as one header line). */
function appended(headers: Readonly<Record<string, string>>, append: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(append)) out[name] = headers[name] !== undefined ? `${headers[name]},${value}` : value;
  return out;
}

function compileChain(
  listener: string,
  index: number | 'default',
  chain: FilterChainConfig,
  resources: ProxyResources,
  upstreams: UpstreamChooser,
): AcceptedChain {
  const chainName = chain.name ?? (index === 'default' ? 'default' : `#${index}`);
  const where = `Listener ${listener} filter chain ${chainName}`;
  onlyFields(where, '', chain, CHAIN_FIELDS);
  onlyFields(where, 'filter_chain_match.', chain.filter_chain_match, MATCH_FIELDS);
  const downstreamTls = compileDownstreamTls(where, chain.transport_socket);
  const filters = chain.filters ?? [];
  const last = filters[filters.length - 1];
  const hcm = last?.typed_config?.['@type'] === HCM_TYPE;
  if (hcm && filters.length !== 1) throw new ConfigRejection(where, 'filters', 'network filters before the HTTP connection manager are not supported');
  const notHttp = (): never => {
    throw new Error('not an HTTP chain');
  };
  if (hcm) onlyFields(where, 'http_connection_manager.', last.typed_config, HCM_FIELDS);
  const http = hcm ? compileHcm(where, last.typed_config as HcmConfig, resources, upstreams, downstreamTls !== undefined) : async () => notHttp();
  const tcp = hcm ? async (): Promise<TcpDecision> => notHttp() : compileTcpChain(where, filters, upstreams, downstreamTls !== undefined);
  const accessLogs = compileAccessLogs(
    where,
    `${hcm ? 'http_connection_manager' : 'tcp_proxy'}.access_log`,
    last?.typed_config?.['access_log'] as TypedConfig[] | undefined,
  );
  const acceptHttp10 = hcm ? compileHttp1Options(where, last.typed_config?.['http_protocol_options']) : false;
  const delayedClose = hcm ? (last.typed_config?.['delayed_close_timeout'] as DurationConfig | undefined) : undefined;
  if (delayedClose !== undefined) compiling(where, 'http_connection_manager.delayed_close_timeout', () => timeoutMs(delayedClose));
  return {
    kind: 'accept',
    listener,
    chain: chainName,
    protocol: hcm ? 'http' : 'tcp',
    ...(downstreamTls ? { downstreamTls } : {}),
    accessLogs,
    acceptHttp10,
    http,
    tcp,
  };
}

/** `http_protocol_options` (Http1ProtocolOptions): `accept_http_10` only; anything else is refused by name. */
function compileHttp1Options(where: string, options: unknown): boolean {
  if (options === undefined || options === null) return false;
  const fields = options as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => key !== 'accept_http_10');
  if (unknown !== undefined) throw new ConfigRejection(where, `http_connection_manager.http_protocol_options.${unknown}`, 'is not supported');
  return flag(fields['accept_http_10'] as boolean | { value: boolean } | undefined, false);
}

/**
 * Compiles a proxy's listeners, routes, clusters and endpoints into its decisions. Throws a
 * ConfigRejection naming the resource and field of anything it cannot implement.
 */
export function compileProxyDecisions(resources: ProxyResources): ProxyDecisions {
  const upstreams = compileUpstreams(resources);
  const listeners = new Map<
    string,
    { config: ListenerConfig; chains: { filter_chain_match: FilterChainMatchConfig; compiled: AcceptedChain }[]; fallback?: AcceptedChain }
  >();
  for (const listener of resources.listeners) {
    if ('api_listener' in listener) throw new ConfigRejection(`Listener ${listener.name}`, 'api_listener', 'API listeners are for proxyless clients');
    onlyFields(`Listener ${listener.name}`, '', listener, LISTENER_FIELDS);
    listener.listener_filters?.forEach((filter, index) => {
      if (!INSPECTOR_TYPES.has(filter.typed_config?.['@type'] ?? '')) {
        throw new ConfigRejection(
          `Listener ${listener.name}`,
          `listener_filters[${index}] (${filter.name})`,
          `type ${filter.typed_config?.['@type'] ?? '(none)'} is not supported`,
        );
      }
    });
    const chains = (listener.filter_chains ?? []).map((config, index) => ({
      filter_chain_match: config.filter_chain_match ?? {},
      compiled: compileChain(listener.name, index, config, resources, upstreams),
    }));
    const fallback = listener.default_filter_chain ? compileChain(listener.name, 'default', listener.default_filter_chain, resources, upstreams) : undefined;
    listeners.set(listener.name, { config: listener, chains, ...(fallback ? { fallback } : {}) });
  }
  const byAddress = new Map<string, string>();
  let virtualOutbound: string | undefined;
  for (const { config } of listeners.values()) {
    const socket = config.address?.socket_address;
    if (socket) byAddress.set(`${socket.address}:${socket.port_value ?? 0}`, config.name);
    if (flag(config.use_original_dst, false) && config.name !== VIRTUAL_INBOUND) virtualOutbound ??= config.name;
  }
  return {
    listenerFor(direction, address, port) {
      if (direction === 'inbound') return listeners.has(VIRTUAL_INBOUND) ? VIRTUAL_INBOUND : undefined;
      return byAddress.get(`${address}:${port}`) ?? byAddress.get(`0.0.0.0:${port}`) ?? byAddress.get(`[::]:${port}`) ?? virtualOutbound;
    },
    connection(name, facts) {
      const listener = listeners.get(name);
      if (!listener) return { kind: 'reset' };
      const chosen = selectFilterChain(listener.chains, facts);
      const compiled = chosen?.compiled ?? listener.fallback;
      return compiled ?? { kind: 'reset', listener: name };
    },
    upstream: upstreams,
  };
}
