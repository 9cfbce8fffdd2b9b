import { listenersOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HTTP_RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const JWT_AUTHN = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';

const CUSTOM_PREFIX = 'mesh-ext-authz-';
const DRY_RUN_CUSTOM_STAT_PREFIX = 'mesh_dry_run_custom_';

export interface RbacFilterSummary {
  /**
   * DENY, ALLOW or LOG; a filter without rules allows everything and reads as ALLOW. CUSTOM: the
   * shadow filter that marks the requests its provider's authorizer is asked about (its policies
   * are shadow rules; `dryRun` when they are dry-run CUSTOM policies, never sent).
   */
  readonly action: string;
  readonly dryRun?: boolean;
  /** The policies it holds, as the generator names them (`ns[<ns>]-policy[<name>]-rule[<i>]`). */
  readonly policies: readonly string[];
}

/** The HTTP RBAC filters of one filter chain, in the order the request meets them, and whether a jwt_authn filter precedes them. */
export function rbacFiltersOfChain(dump: EnvoyConfigDump, listenerName: string, chainName: string): { filters: RbacFilterSummary[]; hasJwt: boolean } {
  const listener = listenersOf(dump).find((l) => l['name'] === listenerName);
  const chains = [
    ...((listener?.['filter_chains'] as Json[] | undefined) ?? []),
    ...(listener?.['default_filter_chain'] ? [listener['default_filter_chain'] as Json] : []),
  ];
  const chain = chains.find((c) => (c['name'] ?? '') === chainName) ?? chains[0];
  const hcm = ((chain?.['filters'] as Json[] | undefined) ?? []).map((f) => (f['typed_config'] as Json | undefined) ?? {}).find((t) => t['@type'] === HCM);
  const httpFilters = ((hcm?.['http_filters'] as Json[] | undefined) ?? []).map((f) => (f['typed_config'] as Json | undefined) ?? {});
  return {
    hasJwt: httpFilters.some((t) => t['@type'] === JWT_AUTHN),
    filters: httpFilters
      .filter((t) => t['@type'] === HTTP_RBAC)
      .map((t): RbacFilterSummary => {
        const rules = t['rules'] as Json | undefined;
        const shadow = Object.keys((((t['shadow_rules'] as Json | undefined) ?? {})['policies'] as Json | undefined) ?? {}).sort();
        if (rules === undefined && shadow.length > 0 && shadow.every((key) => key.startsWith(CUSTOM_PREFIX))) {
          return { action: 'CUSTOM', policies: shadow, ...(t['shadow_rules_stat_prefix'] === DRY_RUN_CUSTOM_STAT_PREFIX ? { dryRun: true } : {}) };
        }
        return { action: String(rules?.['action'] ?? 'ALLOW'), policies: Object.keys((rules?.['policies'] as Json | undefined) ?? {}).sort() };
      }),
  };
}
