import type { ProxyResources } from './proxy-decisions.js';

/** What a proxy's policies and routes can read of a request besides its method, host and path. */
export interface PolicyReadable {
  /** Header names (lower case) a header matcher names: RBAC rules, route matches. */
  readonly headers: ReadonlySet<string>;
  /** JWT claims an RBAC rule reads from the jwt_authn payload (`request.auth.claims[...]`): the first key under the payload. */
  readonly claims: ReadonlySet<string>;
  /** Headers a jwt_authn provider takes tokens from, with the prefixes before a token (never kept as they are). */
  readonly tokenHeaders: ReadonlyMap<string, readonly string[]>;
  /** Query parameters a jwt_authn provider takes tokens from (left out of a kept path). */
  readonly tokenParams: ReadonlySet<string>;
}

const JWT_FILTER = 'envoy.filters.http.jwt_authn';

/** Headers that carry credentials or per-request noise: never kept, whatever names them. */
export const NEVER_KEPT_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-forwarded-client-cert']);

/**
 * Walks a proxy's listeners and routes for the header matchers (`header: {name}` in RBAC rules,
 * `headers: [{name}]` in route matches), the jwt_authn payload paths RBAC metadata matchers read,
 * and the headers jwt_authn providers read tokens from.
 */
export function policyReadable(resources: ProxyResources): PolicyReadable {
  const headers = new Set<string>();
  const claims = new Set<string>();
  // Envoy's defaults, for a provider that names no header, parameter or cookie.
  const tokenHeaders = new Map<string, string[]>([['authorization', ['Bearer ']]]);
  const tokenParams = new Set<string>(['access_token']);
  const visit = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) {
        if (key === 'headers' && isNamed(item)) headers.add(item.name.toLowerCase());
        if (key === 'from_headers' && isNamed(item)) {
          const prefixes = tokenHeaders.get(item.name.toLowerCase()) ?? [];
          const prefix = (item as { value_prefix?: unknown }).value_prefix;
          prefixes.push(typeof prefix === 'string' ? prefix : '');
          tokenHeaders.set(item.name.toLowerCase(), prefixes);
        }
        if (key === 'from_params' && typeof item === 'string') tokenParams.add(item);
        visit(item, key);
      }
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const object = value as Record<string, unknown>;
    if (key === 'header' && typeof object['name'] === 'string') headers.add(object['name'].toLowerCase());
    if (key === 'metadata' && object['filter'] === JWT_FILTER && Array.isArray(object['path'])) {
      const claim = (object['path'] as { key?: unknown }[])[1]?.key;
      if (typeof claim === 'string') claims.add(claim);
    }
    for (const [name, child] of Object.entries(object)) visit(child, name);
  };
  visit(resources.listeners, 'listeners');
  visit([...resources.routes.values()], 'routes');
  for (const name of NEVER_KEPT_HEADERS) headers.delete(name);
  return { headers, claims, tokenHeaders, tokenParams };
}

function isNamed(value: unknown): value is { name: string } {
  return value !== null && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string';
}
