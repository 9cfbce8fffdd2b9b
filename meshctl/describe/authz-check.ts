import { formatTable } from '../orch/table.js';
import { listenersOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

const HTTP_RBAC = 'envoy.filters.http.rbac';
const NETWORK_RBAC = 'envoy.filters.network.rbac';
const HCM = 'envoy.filters.network.http_connection_manager';
/** The reference's order: DENY first, then ALLOW, then LOG; CUSTOM (external authorization) last. */
const ACTIONS = ['DENY', 'ALLOW', 'LOG', 'CUSTOM'] as const;
const ANONYMOUS = '_anonymous_match_nothing_';

/** Every RBAC filter config of the dump's listeners: network filters and the HTTP filters of each connection manager. */
function rbacConfigs(dump: EnvoyConfigDump): Json[] {
  const configs: Json[] = [];
  for (const listener of listenersOf(dump)) {
    const chains = [...((listener['filter_chains'] as Json[] | undefined) ?? []), ...(listener['default_filter_chain'] ? [listener['default_filter_chain'] as Json] : [])];
    for (const chain of chains) {
      for (const filter of (chain['filters'] as Json[] | undefined) ?? []) {
        const typed = (filter['typed_config'] as Json | undefined) ?? {};
        if (filter['name'] === NETWORK_RBAC) configs.push(typed);
        if (filter['name'] === HCM) {
          for (const http of (typed['http_filters'] as Json[] | undefined) ?? []) if (http['name'] === HTTP_RBAC) configs.push((http['typed_config'] as Json | undefined) ?? {});
        }
      }
    }
  }
  return configs;
}

/** `ns[<ns>]-policy[<name>]-rule[<i>]` → `<name>.<ns>` and the rule index. */
export function parsePolicyKey(key: string): { policy: string; rule: string } {
  const match = /^ns\[([^\]]*)\]-policy\[([^\]]*)\]-rule\[([^\]]*)\]$/.exec(key);
  return match ? { policy: `${match[2]}.${match[1]}`, rule: match[3] ?? '' } : { policy: key, rule: '0' };
}

/**
 * `meshctl x authz check`: the AuthorizationPolicies a proxy enforces, read from the RBAC filters
 * of its listeners: `ACTION  AuthorizationPolicy  RULES` (distinct rules per policy).
 */
export function authzCheck(dump: EnvoyConfigDump): string {
  const rules = new Map<string, Map<string, Set<string>>>(ACTIONS.map((action) => [action, new Map()]));
  for (const config of rbacConfigs(dump)) {
    const rbac = (config['rules'] as Json | undefined) ?? {};
    const action = String(rbac['action'] ?? 'ALLOW');
    const byPolicy = rules.get(action) ?? new Map<string, Set<string>>();
    rules.set(action, byPolicy);
    const policies = Object.keys((rbac['policies'] as Json | undefined) ?? {});
    if (policies.length === 0) {
      byPolicy.set(ANONYMOUS, (byPolicy.get(ANONYMOUS) ?? new Set()).add('0'));
      continue;
    }
    for (const key of policies) {
      const { policy, rule } = parsePolicyKey(key);
      byPolicy.set(policy, (byPolicy.get(policy) ?? new Set()).add(rule));
    }
  }
  const rows = [...rules].flatMap(([action, byPolicy]) =>
    [...byPolicy].sort(([a], [b]) => a.localeCompare(b)).map(([policy, indexes]) => [action, policy, String(indexes.size)]),
  );
  return formatTable([['ACTION', 'AuthorizationPolicy', 'RULES'], ...rows], 3);
}

/** The AuthorizationPolicies (`<name>.<namespace>`) a proxy's RBAC filters enforce, sorted. */
export function policyNamesOf(dump: EnvoyConfigDump): string[] {
  const names = new Set<string>();
  for (const config of rbacConfigs(dump)) {
    for (const key of Object.keys((((config['rules'] as Json | undefined) ?? {})['policies'] as Json | undefined) ?? {})) names.add(parsePolicyKey(key).policy);
  }
  return [...names].sort();
}
