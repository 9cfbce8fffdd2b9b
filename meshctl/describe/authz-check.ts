import { formatTable } from '../kube/table.js';
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
    const chains = [
      ...((listener['filter_chains'] as Json[] | undefined) ?? []),
      ...(listener['default_filter_chain'] ? [listener['default_filter_chain'] as Json] : []),
    ];
    for (const chain of chains) {
      for (const filter of (chain['filters'] as Json[] | undefined) ?? []) {
        const typed = (filter['typed_config'] as Json | undefined) ?? {};
        if (filter['name'] === NETWORK_RBAC) configs.push(typed);
        if (filter['name'] === HCM) {
          for (const http of (typed['http_filters'] as Json[] | undefined) ?? [])
            if (http['name'] === HTTP_RBAC) configs.push((http['typed_config'] as Json | undefined) ?? {});
        }
      }
    }
  }
  return configs;
}

const CUSTOM_PREFIX = 'mesh-ext-authz-';
const POLICY_KEY = /^(?:mesh-ext-authz-(?:([a-z0-9-]+)-)?)?ns\[([^\]]*)\]-policy\[([^\]]*)\]-rule\[([^\]]*)\](-deny-due-to-bad-CUSTOM-action)?$/;

/**
 * `ns[<ns>]-policy[<name>]-rule[<i>]` → `<name>.<ns>` and the rule index. A CUSTOM rule's key
 * (`mesh-ext-authz-<provider>-ns[…]…`) also names its provider, and one denied because that
 * provider cannot be used ends in `-deny-due-to-bad-CUSTOM-action`.
 */
export function parsePolicyKey(key: string): { policy: string; rule: string; provider?: string; badProvider?: boolean } {
  const match = POLICY_KEY.exec(key);
  if (!match) return { policy: key, rule: '0' };
  return {
    policy: `${match[3]}.${match[2]}`,
    rule: match[4] ?? '',
    ...(match[1] !== undefined ? { provider: match[1] } : {}),
    ...(match[5] !== undefined ? { badProvider: true } : {}),
  };
}

/**
 * `meshctl x authz check`: the AuthorizationPolicies a proxy enforces, read from the RBAC filters
 * of its listeners: `ACTION  AuthorizationPolicy  RULES` (distinct rules per policy). CUSTOM
 * policies are the shadow rules that send requests to an external authorizer, as the reference
 * reads them; one whose provider cannot be used shows as the DENY it has become.
 */
export function authzCheck(dump: EnvoyConfigDump): string {
  const rules = new Map<string, Map<string, Set<string>>>(ACTIONS.map((action) => [action, new Map()]));
  const add = (action: string, policy: string, rule: string): void => {
    const byPolicy = rules.get(action) ?? new Map<string, Set<string>>();
    rules.set(action, byPolicy);
    byPolicy.set(policy, (byPolicy.get(policy) ?? new Set()).add(rule));
  };
  for (const config of rbacConfigs(dump)) {
    for (const key of Object.keys(((config['shadow_rules'] as Json | undefined)?.['policies'] as Json | undefined) ?? {})) {
      if (key.startsWith(CUSTOM_PREFIX)) add('CUSTOM', parsePolicyKey(key).policy, parsePolicyKey(key).rule);
    }
    // A filter with no enforced rules (a CUSTOM or dry-run shadow filter) allows everything: not an empty ALLOW.
    const rbac = config['rules'] as Json | undefined;
    if (!rbac) continue;
    const action = String(rbac['action'] ?? 'ALLOW');
    const policies = Object.keys((rbac['policies'] as Json | undefined) ?? {});
    if (policies.length === 0) add(action, ANONYMOUS, '0');
    for (const key of policies) add(action, parsePolicyKey(key).policy, parsePolicyKey(key).rule);
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
    for (const key of Object.keys((((config['shadow_rules'] as Json | undefined) ?? {})['policies'] as Json | undefined) ?? {})) {
      if (key.startsWith(CUSTOM_PREFIX)) names.add(parsePolicyKey(key).policy);
    }
  }
  return [...names].sort();
}
