import { listenersOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HTTP_RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const JWT_AUTHN = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';

export interface RbacFilterSummary {
  /** DENY, ALLOW or LOG; a filter without rules allows everything and reads as ALLOW. */
  readonly action: string;
  /** The policies it holds, as the generator names them (`ns[<ns>]-policy[<name>]-rule[<i>]`). */
  readonly policies: readonly string[];
}

/** The HTTP RBAC filters of one filter chain, in the order the request meets them, and whether a jwt_authn filter precedes them. */
export function rbacFiltersOfChain(dump: EnvoyConfigDump, listenerName: string, chainName: string): { filters: RbacFilterSummary[]; hasJwt: boolean } {
  const listener = listenersOf(dump).find((l) => l['name'] === listenerName);
  const chains = [...((listener?.['filter_chains'] as Json[] | undefined) ?? []), ...(listener?.['default_filter_chain'] ? [listener['default_filter_chain'] as Json] : [])];
  const chain = chains.find((c) => (c['name'] ?? '') === chainName) ?? chains[0];
  const hcm = ((chain?.['filters'] as Json[] | undefined) ?? []).map((f) => (f['typed_config'] as Json | undefined) ?? {}).find((t) => t['@type'] === HCM);
  const httpFilters = ((hcm?.['http_filters'] as Json[] | undefined) ?? []).map((f) => (f['typed_config'] as Json | undefined) ?? {});
  return {
    hasJwt: httpFilters.some((t) => t['@type'] === JWT_AUTHN),
    filters: httpFilters
      .filter((t) => t['@type'] === HTTP_RBAC)
      .map((t) => {
        const rules = t['rules'] as Json | undefined;
        return { action: String(rules?.['action'] ?? 'ALLOW'), policies: Object.keys((rules?.['policies'] as Json | undefined) ?? {}).sort() };
      }),
  };
}
