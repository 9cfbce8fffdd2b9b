import { configMetadata } from './config-metadata.js';
import type { HttpMatchRequest, HttpRoute } from '../../crds/index.js';
import type { Proxy } from '../proxy.js';
import { outboundClusterName, parseClusterName } from '../model/cluster-names.js';
import { envoyDuration } from '../envoy/envoy-duration.js';
import { resolveRuleHost, type IndexedVirtualService, type PushContext } from '../model/push-context.js';
import { buildRouteMatch, matchAppliesTo } from './route-match.js';
import { buildRetryPolicy } from './route-retry-policy.js';

/** An Envoy `Route` message in snake_case. */
export type RouteResource = Readonly<Record<string, unknown>>;

/** An Envoy Duration of whole milliseconds. */
function durationOfMs(ms: number): { seconds: number; nanos?: number } {
  const seconds = Math.floor(ms / 1000);
  const nanos = (ms % 1000) * 1_000_000;
  return nanos === 0 ? { seconds } : { seconds, nanos };
}
const UNKNOWN_SERVICE = 'UnknownService';
const REDIRECT_CODES: Readonly<Record<number, string>> = {
  301: 'MOVED_PERMANENTLY',
  302: 'FOUND',
  303: 'SEE_OTHER',
  307: 'TEMPORARY_REDIRECT',
  308: 'PERMANENT_REDIRECT',
};

/** What `buildVirtualServiceRoutes` needs besides the VirtualService. */
/** The route defaults the settings registry sets. */
export interface VirtualServiceRouteOptions {
  /** MESH_DEFAULT_REQUEST_TIMEOUT: the timeout of a VirtualService route that sets none (0: none, Envoy's default turned off). */
  readonly defaultRequestTimeoutMs?: number;
}

export interface VirtualServiceRouteInput extends VirtualServiceRouteOptions {
  readonly proxy: Proxy;
  readonly push: PushContext;
  readonly virtualService: IndexedVirtualService;
  /** The service port being routed (the sidecar's listener port). */
  readonly port: number;
}

/**
 * The Envoy routes of a VirtualService's `http` section for one port, as the reference: one
 * route per applicable match (a route without matches is one catch-all route), in order, stopping
 * after the first catch-all since nothing after it can match. Routes that cannot be translated
 * (delegates, nothing to do) are left out. No catch-all is added.
 */
export function buildVirtualServiceRoutes(input: VirtualServiceRouteInput): RouteResource[] {
  const out: RouteResource[] = [];
  for (const http of input.virtualService.virtualService.spec.http ?? []) {
    let catchAll = false;
    const matches = http.match ?? [];
    if (matches.length === 0) {
      const route = translateRoute(input, http, undefined);
      if (route) out.push(route);
      catchAll = true;
    } else {
      for (const match of matches) {
        if (!matchAppliesTo(match, input.port, input.proxy.metadata.labels, input.proxy.configNamespace)) continue;
        const route = translateRoute(input, http, match);
        if (!route) continue;
        out.push(route);
        if (isCatchAllMatch(route['match'] as Record<string, unknown>)) {
          catchAll = true;
          break;
        }
      }
    }
    if (catchAll) break;
  }
  return out;
}

function isCatchAllMatch(match: Record<string, unknown>): boolean {
  const pathCatchesAll = match['prefix'] === '/' || (match['safe_regex'] as { regex?: string } | undefined)?.regex === '*';
  return pathCatchesAll && match['headers'] === undefined && match['query_parameters'] === undefined;
}

function translateRoute(input: VirtualServiceRouteInput, http: HttpRoute, match: HttpMatchRequest | undefined): RouteResource | undefined {
  if (http.delegate !== undefined) return undefined;
  const out: Record<string, unknown> = {};
  const name = (http.name ?? '') + (match?.name ? `.${match.name}` : '');
  if (name !== '') out['name'] = name;
  out['match'] = buildRouteMatch(match);

  if (http.redirect !== undefined) out['redirect'] = buildRedirect(http.redirect);
  else if (http.directResponse !== undefined) {
    const body = http.directResponse.body;
    const inline = body?.string !== undefined ? { inline_string: body.string } : body?.bytes !== undefined ? { inline_bytes: body.bytes } : undefined;
    out['direct_response'] = { status: http.directResponse.status, ...(inline ? { body: inline } : {}) };
  } else {
    const action = buildRouteAction(input, http);
    if (!action) return undefined;
    out['route'] = action;
  }
  out['decorator'] = { operation: operationOf(out, input.virtualService.name, input.port) };
  out['metadata'] = configMetadata('VirtualService', input.virtualService.namespace, input.virtualService.name);
  Object.assign(out, headerOperations(http.headers));
  // One destination: its own header operations follow the route's, as the reference folds them
  // into the route; several destinations carry theirs on their weighted cluster.
  const only = routedDestinations(http);
  if (only.length === 1 && only[0]?.headers) {
    for (const [field, values] of Object.entries(headerOperations(only[0].headers))) {
      out[field] = [...((out[field] as unknown[] | undefined) ?? []), ...(values as unknown[])];
    }
  }
  return out;
}

/** The destinations a route sends to: all of a single one, else those with a weight. */
function routedDestinations(http: HttpRoute): NonNullable<HttpRoute['route']> {
  return (http.route ?? []).filter((dst) => (http.route ?? []).length === 1 || (dst.weight ?? 0) > 0);
}

function buildRouteAction(input: VirtualServiceRouteInput, http: HttpRoute): Record<string, unknown> | undefined {
  const destinations = routedDestinations(http);
  if (destinations.length === 0) return undefined;
  const action: Record<string, unknown> = {};
  const clusterOf = (dst: (typeof destinations)[number]): string =>
    destinationCluster(input, dst.destination.host, dst.destination.subset, dst.destination.port?.number);
  const [only] = destinations;
  if (destinations.length === 1 && only) action['cluster'] = clusterOf(only);
  else {
    action['weighted_clusters'] = {
      clusters: destinations.map((dst) => ({ name: clusterOf(dst), weight: { value: dst.weight ?? 0 }, ...headerOperations(dst.headers) })),
    };
  }

  const timeout = (http.timeout === undefined ? undefined : envoyDuration(http.timeout)) ?? durationOfMs(input.defaultRequestTimeoutMs ?? 0);
  action['timeout'] = timeout;
  const retry = buildRetryPolicy(http.retries);
  if (retry) action['retry_policy'] = retry;

  const rewrite = http.rewrite;
  if (rewrite?.uri !== undefined && rewrite.uri !== '') action['prefix_rewrite'] = rewrite.uri;
  if (rewrite?.uriRegexRewrite?.match !== undefined) {
    action['regex_rewrite'] = { pattern: { regex: rewrite.uriRegexRewrite.match }, substitution: rewrite.uriRegexRewrite.rewrite ?? '' };
  }
  if (rewrite?.authority !== undefined && rewrite.authority !== '') action['host_rewrite_literal'] = rewrite.authority;
  action['max_grpc_timeout'] = timeout;
  return action;
}

/**
 * `outbound|<port>|<subset>|<fqdn>`, the port from the destination, else the destination
 * service's only port, else the port being routed (the reference's `GetDestinationCluster`).
 */
export function destinationCluster(input: VirtualServiceRouteInput, host: string, subset: string | undefined, port: number | undefined): string {
  if (host === '') return UNKNOWN_SERVICE;
  const fqdn = resolveRuleHost(host, input.virtualService.namespace, input.push.domain);
  const service = input.push.serviceByHost.get(fqdn);
  const [onlyPort, ...more] = service?.ports ?? [];
  const resolved = port ?? (onlyPort !== undefined && more.length === 0 ? onlyPort.port : input.port);
  return outboundClusterName(resolved, subset ?? '', fqdn);
}

function buildRedirect(redirect: NonNullable<HttpRoute['redirect']>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (redirect.scheme !== undefined && redirect.scheme !== '') out['scheme_redirect'] = redirect.scheme;
  if (redirect.authority !== undefined && redirect.authority !== '') out['host_redirect'] = redirect.authority;
  if (redirect.port !== undefined) out['port_redirect'] = redirect.port;
  if (redirect.uri !== undefined && redirect.uri !== '') out['path_redirect'] = redirect.uri;
  else if (redirect.prefixRewrite !== undefined) out['prefix_rewrite'] = redirect.prefixRewrite;
  out['response_code'] = REDIRECT_CODES[redirect.redirectCode ?? 301] ?? 'MOVED_PERMANENTLY';
  return out;
}

/** The decorator: `<host>:<port><path>` for a single-cluster route, else `<vs name>:<port><path>`. */
function operationOf(route: Record<string, unknown>, virtualServiceName: string, port: number): string {
  const match = route['match'] as Record<string, unknown>;
  let path = '/*';
  if (typeof match['prefix'] === 'string') path = `${match['prefix']}*`;
  else if (typeof match['path'] === 'string') path = match['path'];
  else if (match['safe_regex'] !== undefined) path = (match['safe_regex'] as { regex: string }).regex;
  const cluster = (route['route'] as { cluster?: string } | undefined)?.cluster;
  const parsed = cluster === undefined ? undefined : parseClusterName(cluster);
  return parsed ? `${parsed.hostname}:${parsed.port}${path}` : `${virtualServiceName}:${port}${path}`;
}

function headerOperations(headers: HttpRoute['headers']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [direction, ops] of [
    ['request', headers?.request],
    ['response', headers?.response],
  ] as const) {
    const add = [
      ...Object.entries(ops?.set ?? {}).map(([key, value]) => ({ header: { key, value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' })),
      ...Object.entries(ops?.add ?? {}).map(([key, value]) => ({ header: { key, value }, append_action: 'APPEND_IF_EXISTS_OR_ADD' })),
    ];
    if (add.length > 0) out[`${direction}_headers_to_add`] = add;
    if (ops?.remove !== undefined && ops.remove.length > 0) out[`${direction}_headers_to_remove`] = [...ops.remove];
  }
  return out;
}
