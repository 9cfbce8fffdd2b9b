import { RE2JS } from 're2js';
import type { HttpRequestFacts } from './facts.js';
import { compileRouteMatch, splitPath, type RouteMatchConfig } from './route-match.js';

interface DurationConfig {
  seconds?: number | string;
  nanos?: number;
}

export interface RouteActionConfig {
  cluster?: string;
  weighted_clusters?: { clusters: ClusterWeightConfig[]; total_weight?: number | { value: number } };
  prefix_rewrite?: string;
  regex_rewrite?: { pattern: { regex: string }; substitution: string };
  host_rewrite_literal?: string;
  timeout?: DurationConfig;
  retry_policy?: { retry_on?: string; num_retries?: number | { value: number }; per_try_timeout?: DurationConfig };
}

/** One cluster of `weighted_clusters`, with the header edits applied when it is picked. */
export interface ClusterWeightConfig {
  name: string;
  weight: number | { value: number };
  request_headers_to_add?: HeaderValueOption[];
  request_headers_to_remove?: string[];
  response_headers_to_add?: HeaderValueOption[];
  response_headers_to_remove?: string[];
}

export interface RedirectActionConfig {
  scheme_redirect?: string;
  https_redirect?: boolean;
  host_redirect?: string;
  port_redirect?: number;
  path_redirect?: string;
  prefix_rewrite?: string;
  response_code?: string | number;
  strip_query?: boolean;
}

interface HeaderValueOption {
  header: { key: string; value?: string };
  append_action?: string;
}

export interface RouteConfig {
  name?: string;
  match: RouteMatchConfig;
  route?: RouteActionConfig;
  redirect?: RedirectActionConfig;
  direct_response?: { status: number; body?: { inline_string?: string } };
  non_forwarding_action?: object;
  request_headers_to_add?: HeaderValueOption[];
  request_headers_to_remove?: string[];
  response_headers_to_add?: HeaderValueOption[];
  response_headers_to_remove?: string[];
}

/** Header edits of a route: set (overwrite), append, remove. */
export interface HeaderEdits {
  readonly set: Readonly<Record<string, string>>;
  readonly append: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

const ROUTE_FIELDS = new Set([
  'name',
  'match',
  'route',
  'redirect',
  'direct_response',
  'non_forwarding_action',
  'decorator',
  'request_headers_to_add',
  'request_headers_to_remove',
  'response_headers_to_add',
  'response_headers_to_remove',
  'metadata',
]);
const ACTION_FIELDS = new Set([
  'cluster',
  'weighted_clusters',
  'prefix_rewrite',
  'regex_rewrite',
  'host_rewrite_literal',
  'timeout',
  'retry_policy',
  'max_grpc_timeout',
  'cluster_not_found_response_code',
]);

function headerEdits(add: readonly HeaderValueOption[] | undefined, remove: readonly string[] | undefined): HeaderEdits {
  const set: Record<string, string> = {};
  const append: Record<string, string> = {};
  for (const option of add ?? []) {
    const name = option.header.key.toLowerCase();
    if (option.append_action === 'APPEND_IF_EXISTS_OR_ADD') append[name] = option.header.value ?? '';
    else set[name] = option.header.value ?? '';
  }
  return { set, append, remove: (remove ?? []).map((name) => name.toLowerCase()) };
}

export interface VirtualHostConfig {
  name: string;
  domains: string[];
  routes?: RouteConfig[];
  /** `ALL` or `EXTERNAL_ONLY`: plain-text requests are redirected to https. */
  require_tls?: string | number;
  include_request_attempt_count?: boolean;
}

const VIRTUAL_HOST_FIELDS = new Set(['name', 'domains', 'routes', 'require_tls', 'include_request_attempt_count']);
const ROUTE_CONFIGURATION_FIELDS = new Set(['name', 'virtual_hosts', 'validate_clusters', 'ignore_port_in_host_matching']);

/** `envoy.config.route.v3.RouteConfiguration`. */
export interface RouteConfigurationConfig {
  name?: string;
  virtual_hosts?: VirtualHostConfig[];
  ignore_port_in_host_matching?: boolean;
}

export interface RetryDecision {
  readonly retryOn: readonly string[];
  readonly numRetries: number;
  readonly perTryTimeoutMs?: number;
}

export type RouteDecision =
  | { readonly kind: 'no-route'; readonly status: 404; readonly virtualHost?: string }
  | {
      readonly kind: 'cluster';
      readonly virtualHost: string;
      readonly route: string;
      /** The route's own `name` (`%ROUTE_NAME%`); absent when it has none. */
      readonly routeName?: string;
      readonly cluster: string;
      /** The path and host the upstream sees, rewrites applied. */
      readonly path: string;
      readonly host: string;
      /** 0 disables the timeout; Envoy's default is 15 s. */
      readonly timeoutMs: number;
      readonly retry?: RetryDecision;
      readonly requestHeaders: HeaderEdits;
      readonly responseHeaders: HeaderEdits;
    }
  | {
      readonly kind: 'redirect';
      readonly virtualHost: string;
      readonly route: string;
      readonly routeName?: string;
      readonly status: number;
      readonly location: string;
    }
  | {
      readonly kind: 'direct-response';
      readonly virtualHost: string;
      readonly route: string;
      readonly routeName?: string;
      readonly status: number;
      readonly body: string;
    }
  | { readonly kind: 'non-forwarding'; readonly virtualHost: string; readonly route: string; readonly routeName?: string };

const DEFAULT_TIMEOUT_MS = 15_000;

const REDIRECT_CODES: Readonly<Record<string, number>> = {
  MOVED_PERMANENTLY: 301,
  FOUND: 302,
  SEE_OTHER: 303,
  TEMPORARY_REDIRECT: 307,
  PERMANENT_REDIRECT: 308,
};
const REDIRECT_CODE_BY_INDEX = [301, 302, 303, 307, 308];

function durationMs(duration: DurationConfig | undefined): number | undefined {
  if (!duration) return undefined;
  return Number(duration.seconds ?? 0) * 1000 + Math.round((duration.nanos ?? 0) / 1e6);
}

function numberOf(value: number | { value: number } | undefined): number | undefined {
  return value === undefined ? undefined : typeof value === 'number' ? value : value.value;
}

/**
 * Envoy's virtual host choice: an exact domain, then the longest `*.suffix`, then the longest
 * `prefix*`, then `*`. The host keeps its port unless the configuration ignores it.
 */
function compileDomains(virtualHosts: readonly VirtualHostConfig[]): (host: string) => number | undefined {
  const exact = new Map<string, number>();
  const suffixes: { suffix: string; index: number }[] = [];
  const prefixes: { prefix: string; index: number }[] = [];
  let catchAll: number | undefined;
  virtualHosts.forEach((virtualHost, index) => {
    for (const domain of virtualHost.domains.map((d) => d.toLowerCase())) {
      if (domain === '*') catchAll ??= index;
      else if (domain.startsWith('*')) suffixes.push({ suffix: domain.slice(1), index });
      else if (domain.endsWith('*')) prefixes.push({ prefix: domain.slice(0, -1), index });
      else if (!exact.has(domain)) exact.set(domain, index);
    }
  });
  suffixes.sort((a, b) => b.suffix.length - a.suffix.length);
  prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  return (host) => {
    const found = exact.get(host);
    if (found !== undefined) return found;
    // A wildcard never matches the empty string: `*.a.com` does not match `.a.com`.
    const suffix = suffixes.find((entry) => host.length > entry.suffix.length && host.endsWith(entry.suffix));
    if (suffix) return suffix.index;
    const prefix = prefixes.find((entry) => host.length > entry.prefix.length && host.startsWith(entry.prefix));
    if (prefix) return prefix.index;
    return catchAll;
  };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(0, end + 1);
  }
  const colon = host.lastIndexOf(':');
  return colon >= 0 && host.indexOf(':') === colon ? host.slice(0, colon) : host;
}

function pickWeighted(action: NonNullable<RouteActionConfig['weighted_clusters']>, random: number): ClusterWeightConfig | undefined {
  const weights = action.clusters.map((cluster) => numberOf(cluster.weight) ?? 0);
  const total = numberOf(action.total_weight) ?? weights.reduce((sum, weight) => sum + weight, 0);
  let point = Math.floor(random * total);
  for (const [index, cluster] of action.clusters.entries()) {
    point -= weights[index] ?? 0;
    if (point < 0) return cluster;
  }
  return action.clusters[action.clusters.length - 1];
}

/**
 * The edits of a picked weighted cluster, then the route's over them: Envoy applies the cluster's
 * first and the enclosing route's after (the less specific wins a conflict, by default).
 */
function withClusterEdits(cluster: HeaderEdits, route: HeaderEdits): HeaderEdits {
  return { set: { ...cluster.set, ...route.set }, append: { ...cluster.append, ...route.append }, remove: [...new Set([...cluster.remove, ...route.remove])] };
}

function compileRouteAction(
  action: RouteActionConfig,
  match: RouteMatchConfig,
): (request: HttpRequestFacts, random: number) => { cluster: string; path: string; host: string; picked?: ClusterWeightConfig } {
  if (!action.cluster && !action.weighted_clusters) throw new Error('route sets neither cluster nor weighted_clusters');
  const regexRewrite = action.regex_rewrite
    ? { pattern: RE2JS.compile(action.regex_rewrite.pattern.regex), substitution: action.regex_rewrite.substitution.replace(/\\(\d)/g, '$$$1') }
    : undefined;
  const matchedPrefix = match.prefix ?? match.path_separated_prefix;
  return (request, random) => {
    const picked =
      action.cluster === undefined ? pickWeighted(action.weighted_clusters as NonNullable<RouteActionConfig['weighted_clusters']>, random) : undefined;
    const cluster = action.cluster ?? picked?.name ?? '';
    const { path, query } = splitPath(request.path);
    let rewritten = path;
    if (action.prefix_rewrite !== undefined && matchedPrefix !== undefined) rewritten = action.prefix_rewrite + path.slice(matchedPrefix.length);
    else if (regexRewrite) rewritten = regexRewrite.pattern.matcher(path).replaceAll(regexRewrite.substitution);
    return {
      cluster,
      path: query === '' ? rewritten : `${rewritten}?${query}`,
      host: action.host_rewrite_literal ?? request.host,
      ...(picked ? { picked } : {}),
    };
  };
}

function redirectLocation(redirect: RedirectActionConfig, match: RouteMatchConfig, request: HttpRequestFacts, scheme: string): string {
  const { path, query } = splitPath(request.path);
  const newScheme = redirect.https_redirect ? 'https' : (redirect.scheme_redirect ?? scheme);
  let host = redirect.host_redirect ?? stripPort(request.host);
  const originalPort = request.host.slice(stripPort(request.host).length + 1);
  if (redirect.port_redirect) host = `${host}:${redirect.port_redirect}`;
  else if (!redirect.https_redirect && !redirect.host_redirect && originalPort !== '') host = `${host}:${originalPort}`;
  let newPath = path;
  if (redirect.path_redirect !== undefined) newPath = redirect.path_redirect;
  else if (redirect.prefix_rewrite !== undefined && match.prefix !== undefined) newPath = redirect.prefix_rewrite + path.slice(match.prefix.length);
  const keepQuery = redirect.strip_query !== true && query !== '' && !newPath.includes('?');
  return `${newScheme}://${host}${newPath}${keepQuery ? `?${query}` : ''}`;
}

function redirectStatus(code: string | number | undefined): number {
  if (code === undefined) return 301;
  if (typeof code === 'number') return REDIRECT_CODE_BY_INDEX[code] ?? 301;
  return REDIRECT_CODES[code] ?? 301;
}

/** Inputs of a routing decision besides the request. */
export interface RouteContext {
  /** Uniform in [0, 1): picks among weighted clusters. */
  readonly random: number;
  /** `http` or `https`: the scheme redirects keep. */
  readonly scheme: string;
}

/** Compiles a RouteConfiguration into the router's decision: virtual host, route, action. */
export function compileRouteConfiguration(config: RouteConfigurationConfig): (request: HttpRequestFacts, context: RouteContext) => RouteDecision {
  const unknown = Object.keys(config).find((key) => !ROUTE_CONFIGURATION_FIELDS.has(key));
  if (unknown) throw new Error(`${unknown} is not supported`);
  const virtualHosts = config.virtual_hosts ?? [];
  for (const virtualHost of virtualHosts) {
    const field = Object.keys(virtualHost).find((key) => !VIRTUAL_HOST_FIELDS.has(key));
    if (field) throw new Error(`virtual_hosts["${virtualHost.name}"].${field} is not supported`);
  }
  const chooseHost = compileDomains(virtualHosts);
  const ignorePort = config.ignore_port_in_host_matching === true;
  const compiled = virtualHosts.map((virtualHost) => ({
    name: virtualHost.name,
    requireTls: virtualHost.require_tls !== undefined && virtualHost.require_tls !== 'NONE' && virtualHost.require_tls !== 0,
    routes: (virtualHost.routes ?? []).map((route, index) => {
      const name = route.name ?? `${virtualHost.name}/${index}`;
      const matches = compileRouteMatch(route.match);
      const forward = route.route ? compileRouteAction(route.route, route.match) : undefined;
      const retry = route.route?.retry_policy;
      const where = `virtual_hosts["${virtualHost.name}"].routes[${index}]`;
      if (!route.route && !route.redirect && !route.direct_response && !route.non_forwarding_action) {
        throw new Error(`${where} has no action (route, redirect, direct_response, non_forwarding_action)`);
      }
      const unknown = Object.keys(route).find((key) => !ROUTE_FIELDS.has(key));
      if (unknown) throw new Error(`${where}.${unknown} is not supported`);
      const unknownAction = Object.keys(route.route ?? {}).find((key) => !ACTION_FIELDS.has(key));
      if (unknownAction) throw new Error(`${where}.route.${unknownAction} is not supported`);
      const requestHeaders = headerEdits(route.request_headers_to_add, route.request_headers_to_remove);
      const responseHeaders = headerEdits(route.response_headers_to_add, route.response_headers_to_remove);
      // Each weighted cluster's edits, merged with the route's once, for the requests that pick it.
      const byCluster = new Map(
        (route.route?.weighted_clusters?.clusters ?? []).map((cluster) => [
          cluster,
          {
            requestHeaders: withClusterEdits(headerEdits(cluster.request_headers_to_add, cluster.request_headers_to_remove), requestHeaders),
            responseHeaders: withClusterEdits(headerEdits(cluster.response_headers_to_add, cluster.response_headers_to_remove), responseHeaders),
          },
        ]),
      );
      return { name, matches, forward, route, retry, requestHeaders, responseHeaders, byCluster };
    }),
  }));
  return (request, context) => {
    const host = request.host.toLowerCase();
    const index = chooseHost(ignorePort ? stripPort(host) : host);
    const virtualHost = index === undefined ? undefined : compiled[index];
    if (!virtualHost) return { kind: 'no-route', status: 404 };
    if (virtualHost.requireTls && context.scheme !== 'https') {
      return {
        kind: 'redirect',
        virtualHost: virtualHost.name,
        route: 'require_tls',
        status: 301,
        location: `https://${stripPort(request.host)}${request.path}`,
      };
    }
    const chosen = virtualHost.routes.find((route) => route.matches(request));
    if (!chosen) return { kind: 'no-route', status: 404, virtualHost: virtualHost.name };
    const base = { virtualHost: virtualHost.name, route: chosen.name, ...(chosen.route.name !== undefined ? { routeName: chosen.route.name } : {}) };
    if (chosen.forward) {
      const { picked, ...target } = chosen.forward(request, context.random);
      const timeoutMs = durationMs(chosen.route.route?.timeout) ?? DEFAULT_TIMEOUT_MS;
      const retry = chosen.retry
        ? {
            retryOn: (chosen.retry.retry_on ?? '').split(',').filter((entry) => entry !== ''),
            numRetries: numberOf(chosen.retry.num_retries) ?? 1,
            ...(chosen.retry.per_try_timeout ? { perTryTimeoutMs: durationMs(chosen.retry.per_try_timeout) ?? 0 } : {}),
          }
        : undefined;
      return {
        kind: 'cluster',
        ...base,
        ...target,
        timeoutMs,
        ...(retry ? { retry } : {}),
        ...((picked && chosen.byCluster.get(picked)) ?? { requestHeaders: chosen.requestHeaders, responseHeaders: chosen.responseHeaders }),
      };
    }
    if (chosen.route.redirect) {
      return {
        kind: 'redirect',
        ...base,
        status: redirectStatus(chosen.route.redirect.response_code),
        location: redirectLocation(chosen.route.redirect, chosen.route.match, request, context.scheme),
      };
    }
    if (chosen.route.direct_response) {
      return { kind: 'direct-response', ...base, status: chosen.route.direct_response.status, body: chosen.route.direct_response.body?.inline_string ?? '' };
    }
    return { kind: 'non-forwarding', ...base };
  };
}
