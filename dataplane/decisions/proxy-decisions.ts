import { compileClientCertHeader, XFCC_HEADER, type ClientCertHeaderConfig } from './client-cert-header.js';
import { compiling, ConfigRejection } from './config-rejection.js';
import { DOWNSTREAM_TLS_TYPE, HCM_TYPE, HTTP_RBAC_TYPE, INSPECTOR_TYPES, JWT_AUTHN_TYPE, NETWORK_RBAC_TYPE, RAW_BUFFER_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE, type TypedConfig } from './envoy-types.js';
import type { ConnectionFacts, DynamicMetadata, HttpRequestFacts } from './facts.js';
import { selectFilterChain, type FilterChainMatchConfig } from './filter-chain-match.js';
import { compileJwtAuthn, type JwtAuthenticationConfig, type JwtVerdict } from './jwt-authn.js';
import { compilePathNormalization, type PathNormalizationConfig } from './path-normalization.js';
import { compileRbacFilter, type RbacFilterConfig, type RbacVerdict } from './rbac.js';
import { compileRouteConfiguration, type RouteConfigurationConfig, type RouteDecision } from './route-configuration.js';
import { compileUpstreamTls, decodeCommonTlsContext, type ClusterTlsConfig, type CommonTlsContext, type TlsContextSettings, type UpstreamTls } from './upstream-tls.js';

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

export type UpstreamDecision =
  | { readonly kind: 'endpoint'; readonly cluster: string; readonly address: string; readonly port: number; readonly tls: UpstreamTls }
  /** ORIGINAL_DST: connect where the client was going. */
  | { readonly kind: 'original-destination'; readonly cluster: string; readonly tls: UpstreamTls }
  | { readonly kind: 'no-healthy-upstream'; readonly cluster: string }
  | { readonly kind: 'unknown-cluster'; readonly cluster: string };

/** What the data plane does with one HTTP request on an accepted chain. */
export type HttpDecision =
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly body: string;
      /** Which stage answered. */
      readonly by: 'path' | 'jwt' | 'rbac' | 'router';
      readonly headers?: Readonly<Record<string, string>>;
      readonly jwt?: JwtVerdict;
      readonly rbac: readonly RbacVerdict[];
      readonly route?: RouteDecision;
    }
  | {
      readonly kind: 'forward';
      readonly route: Extract<RouteDecision, { kind: 'cluster' }>;
      readonly upstream: UpstreamDecision;
      /** The request line and headers the upstream receives. */
      readonly path: string;
      readonly host: string;
      readonly headersToSet: Readonly<Record<string, string>>;
      readonly headersToRemove: readonly string[];
      readonly jwt?: JwtVerdict;
      readonly rbac: readonly RbacVerdict[];
      readonly metadata: DynamicMetadata;
    };

export type TcpDecision =
  | { readonly kind: 'reset'; readonly by: 'rbac'; readonly rbac: readonly RbacVerdict[] }
  | { readonly kind: 'forward'; readonly upstream: UpstreamDecision; readonly rbac: readonly RbacVerdict[] };

/** Inputs of a request decision besides the request itself. */
export interface RequestContext {
  /** The connection, with the verified peer certificate once TLS was terminated. */
  readonly connection: ConnectionFacts;
  /** The URI SAN of this proxy's own certificate (XFCC `By`). */
  readonly localUriSan?: string;
  readonly now: Date;
  /** Uniform in [0, 1): weighted clusters. */
  readonly random: number;
  /** Increasing counter: round robin over endpoints. */
  readonly pick: number;
}

export interface AcceptedChain {
  readonly kind: 'accept';
  readonly listener: string;
  readonly chain: string;
  readonly protocol: 'http' | 'tcp';
  readonly downstreamTls?: DownstreamTls;
  http(request: HttpRequestFacts, context: RequestContext): Promise<HttpDecision>;
  tcp(context: RequestContext): TcpDecision;
}

export type ConnectionDecision = { readonly kind: 'reset'; readonly listener?: string } | AcceptedChain;

export interface ProxyDecisions {
  /** Which listener takes a connection to this original destination (inbound: `virtualInbound`). */
  listenerFor(direction: 'inbound' | 'outbound', destinationAddress: string, destinationPort: number): string | undefined;
  /** The filter chain of a listener that accepts the connection, or a reset. */
  connection(listener: string, facts: ConnectionFacts): ConnectionDecision;
}

const UNHEALTHY = new Set(['UNHEALTHY', 'DRAINING', 'TIMEOUT', 2, 3, 4]);

// The fields the data plane implements (or that change nothing it does): anything else is refused by name.
const LISTENER_FIELDS = new Set(['name', 'address', 'traffic_direction', 'filter_chains', 'default_filter_chain', 'listener_filters', 'use_original_dst', 'bind_to_port', 'continue_on_listener_filters_timeout', 'listener_filters_timeout']);
const CHAIN_FIELDS = new Set(['name', 'filters', 'filter_chain_match', 'transport_socket']);
const MATCH_FIELDS = new Set(['server_names', 'prefix_ranges', 'destination_port', 'transport_protocol', 'application_protocols', 'source_prefix_ranges']);
const HCM_FIELDS = new Set(['@type', 'stat_prefix', 'rds', 'route_config', 'http_filters', 'use_remote_address', 'internal_address_config', 'forward_client_cert_details', 'set_current_client_cert_details', 'normalize_path', 'merge_slashes', 'path_with_escaped_slashes_action', 'codec_type']);
const CLUSTER_FIELDS = new Set(['name', 'type', 'eds_cluster_config', 'connect_timeout', 'lb_policy', 'load_assignment', 'upstream_bind_config', 'transport_socket_matches', 'transport_socket', 'metadata']);

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
function compileUpstreams(resources: ProxyResources): (cluster: string, pick: number) => UpstreamDecision {
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
      compiled.set(name, () => ({ kind: 'original-destination', cluster: name, tls: tlsFor(undefined) }));
      continue;
    }
    if (type !== 'EDS' && type !== 'STATIC') throw new ConfigRejection(`Cluster ${name}`, 'type', `${type} is not supported (EDS, STATIC, ORIGINAL_DST)`);
    const assignment = type === 'EDS' ? resources.endpoints.get(cluster.eds_cluster_config?.service_name || name) : cluster.load_assignment;
    const endpoints = compileEndpoints(assignment);
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

interface HcmConfig extends PathNormalizationConfig, ClientCertHeaderConfig {
  rds?: { route_config_name: string };
  route_config?: RouteConfigurationConfig;
  http_filters?: TypedConfig[];
  use_remote_address?: boolean | { value: boolean };
}

type HttpStage =
  | { kind: 'jwt'; run: ReturnType<typeof compileJwtAuthn> }
  | { kind: 'rbac'; run: ReturnType<typeof compileRbacFilter> };

function compileHttpFilters(where: string, filters: readonly TypedConfig[]): HttpStage[] {
  const stages: HttpStage[] = [];
  filters.forEach((filter, index) => {
    const field = `http_filters[${index}] (${filter.name})`;
    const type = filter.typed_config?.['@type'];
    const isLast = index === filters.length - 1;
    if (type === ROUTER_TYPE) {
      if (!isLast) throw new ConfigRejection(where, field, 'the router must be the last HTTP filter');
      return;
    }
    if (isLast) throw new ConfigRejection(where, field, 'the last HTTP filter must be the router');
    if (type === JWT_AUTHN_TYPE) stages.push({ kind: 'jwt', run: compiling(where, field, () => compileJwtAuthn(filter.typed_config as JwtAuthenticationConfig)) });
    else if (type === HTTP_RBAC_TYPE) stages.push({ kind: 'rbac', run: compiling(where, field, () => compileRbacFilter(filter.typed_config as RbacFilterConfig)) });
    else if (filter.is_optional !== true) throw new ConfigRejection(where, field, `filter type ${type ?? '(none)'} is not supported`);
  });
  if (filters.length === 0) throw new ConfigRejection(where, 'http_filters', 'the router filter is required');
  return stages;
}

function compileHcm(where: string, config: HcmConfig, resources: ProxyResources, upstreams: ReturnType<typeof compileUpstreams>): AcceptedChain['http'] {
  const stages = compileHttpFilters(where, config.http_filters ?? []);
  const normalize = compilePathNormalization(config);
  const clientCert = compileClientCertHeader(config);
  const edge = flag(config.use_remote_address, false);
  const inline = config.route_config ? compiling(where, 'route_config', () => compileRouteConfiguration(config.route_config as RouteConfigurationConfig)) : undefined;
  const routeName = config.rds?.route_config_name;
  if (!inline && routeName === undefined) throw new ConfigRejection(where, 'route_specifier', 'needs rds or route_config');
  const rds = routeName === undefined ? undefined : resources.routes.get(routeName);
  const routed = inline ?? (rds ? compiling(`RouteConfiguration ${routeName}`, 'virtual_hosts', () => compileRouteConfiguration(rds)) : undefined);

  return async (incoming, context) => {
    const normalized = normalize(incoming.path);
    if (!normalized.ok) return { kind: 'respond', status: 400, body: 'Bad Request', by: 'path', rbac: [] };
    const headers: Record<string, string> = { ...incoming.headers };
    const headersToRemove: string[] = [];
    if (edge) {
      for (const name of Object.keys(headers)) {
        if (name.startsWith('x-envoy-')) {
          delete headers[name];
          headersToRemove.push(name);
        }
      }
    }
    const xfcc = clientCert(incoming.headers[XFCC_HEADER], { ...(context.connection.peerCertificate ? { peerCertificate: context.connection.peerCertificate } : {}), ...(context.localUriSan ? { localUriSan: context.localUriSan } : {}) });
    const headersToSet: Record<string, string> = {};
    if (xfcc === undefined) {
      if (headers[XFCC_HEADER] !== undefined) headersToRemove.push(XFCC_HEADER);
      delete headers[XFCC_HEADER];
    } else {
      headers[XFCC_HEADER] = xfcc;
      headersToSet[XFCC_HEADER] = xfcc;
    }
    const request: HttpRequestFacts = { ...incoming, path: normalized.path, headers };
    let metadata: Record<string, Record<string, unknown>> = {};
    let jwt: JwtVerdict | undefined;
    const rbac: RbacVerdict[] = [];
    for (const stage of stages) {
      if (stage.kind === 'jwt') {
        jwt = await stage.run(request, context.now);
        if (jwt.kind === 'deny') return { kind: 'respond', status: jwt.status, body: jwt.message, by: 'jwt', jwt, rbac };
        metadata = { ...metadata, 'envoy.filters.http.jwt_authn': { ...jwt.metadata } };
        // `headers` is this request's own copy (`request.headers`): the later filters see the edits.
        Object.assign(headers, jwt.headersToSet);
        for (const name of jwt.headersToRemove) delete headers[name];
        Object.assign(headersToSet, jwt.headersToSet);
        headersToRemove.push(...jwt.headersToRemove);
      } else {
        const verdict = stage.run({ connection: context.connection, request, metadata });
        rbac.push(verdict);
        if (!verdict.allowed) return { kind: 'respond', status: 403, body: 'RBAC: access denied', by: 'rbac', ...(jwt ? { jwt } : {}), rbac };
      }
    }
    const optional = { ...(jwt ? { jwt } : {}) };
    if (!routed) return { kind: 'respond', status: 404, body: '', by: 'router', ...optional, rbac };
    const route = routed(request, { random: context.random, scheme: context.connection.transportProtocol === 'tls' ? 'https' : 'http' });
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

function compileTcp(where: string, filters: readonly TypedConfig[], upstreams: ReturnType<typeof compileUpstreams>): AcceptedChain['tcp'] {
  const rbacFilters: ReturnType<typeof compileRbacFilter>[] = [];
  let cluster: string | undefined;
  filters.forEach((filter, index) => {
    const field = `filters[${index}] (${filter.name})`;
    const type = filter.typed_config?.['@type'];
    if (type === NETWORK_RBAC_TYPE) rbacFilters.push(compiling(where, field, () => compileRbacFilter(filter.typed_config as RbacFilterConfig)));
    else if (type === TCP_PROXY_TYPE) {
      if (index !== filters.length - 1) throw new ConfigRejection(where, field, 'tcp_proxy must be the last filter');
      const value = (filter.typed_config as { cluster?: string }).cluster;
      if (!value) throw new ConfigRejection(where, `${field}.cluster`, 'only a single cluster is supported');
      cluster = value;
    } else throw new ConfigRejection(where, field, `filter type ${type ?? '(none)'} is not supported`);
  });
  const target = cluster;
  if (target === undefined) throw new ConfigRejection(where, 'filters', 'needs tcp_proxy or http_connection_manager last');
  return (context) => {
    const rbac: RbacVerdict[] = [];
    for (const run of rbacFilters) {
      const verdict = run({ connection: context.connection, metadata: {} });
      rbac.push(verdict);
      if (!verdict.allowed) return { kind: 'reset', by: 'rbac', rbac };
    }
    return { kind: 'forward', upstream: upstreams(target, context.pick), rbac };
  };
}

function compileChain(listener: string, index: number | 'default', chain: FilterChainConfig, resources: ProxyResources, upstreams: ReturnType<typeof compileUpstreams>): AcceptedChain {
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
  const http = hcm ? compileHcm(where, last.typed_config as HcmConfig, resources, upstreams) : async () => notHttp();
  const tcp = hcm ? (): TcpDecision => notHttp() : compileTcp(where, filters, upstreams);
  return { kind: 'accept', listener, chain: chainName, protocol: hcm ? 'http' : 'tcp', ...(downstreamTls ? { downstreamTls } : {}), http, tcp };
}

/**
 * Compiles a proxy's listeners, routes, clusters and endpoints into its decisions. Throws a
 * ConfigRejection naming the resource and field of anything it cannot implement.
 */
export function compileProxyDecisions(resources: ProxyResources): ProxyDecisions {
  const upstreams = compileUpstreams(resources);
  const listeners = new Map<string, { config: ListenerConfig; chains: { filter_chain_match: FilterChainMatchConfig; compiled: AcceptedChain }[]; fallback?: AcceptedChain }>();
  for (const listener of resources.listeners) {
    if ('api_listener' in listener) throw new ConfigRejection(`Listener ${listener.name}`, 'api_listener', 'API listeners are for proxyless clients');
    onlyFields(`Listener ${listener.name}`, '', listener, LISTENER_FIELDS);
    listener.listener_filters?.forEach((filter, index) => {
      if (!INSPECTOR_TYPES.has(filter.typed_config?.['@type'] ?? '')) {
        throw new ConfigRejection(`Listener ${listener.name}`, `listener_filters[${index}] (${filter.name})`, `type ${filter.typed_config?.['@type'] ?? '(none)'} is not supported`);
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
  };
}
