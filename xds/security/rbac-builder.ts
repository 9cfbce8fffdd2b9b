import type { AuthorizationPolicy } from '../../crds/index.js';
import { DRY_RUN_ANNOTATION } from '../../names/index.js';
import { buildRulePolicy } from './authz-rule-model.js';
import { matchNeverPolicy, type RbacAction, type RbacPolicy, type RbacRules } from './rbac-types.js';

export const RBAC_HTTP_FILTER_NAME = 'envoy.filters.http.rbac';
export const RBAC_NETWORK_FILTER_NAME = 'envoy.filters.network.rbac';
export const RBAC_HTTP_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
export const RBAC_NETWORK_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
export const TCP_STAT_PREFIX = 'tcp.';
export const SHADOW_ALLOW_STAT_PREFIX = 'mesh_dry_run_allow_';
export const SHADOW_DENY_STAT_PREFIX = 'mesh_dry_run_deny_';

/** `envoy.extensions.filters.{http,network}.rbac.v3.RBAC`. */
export interface RbacFilterConfig {
  rules?: RbacRules;
  shadow_rules?: RbacRules;
  shadow_rules_stat_prefix: string;
  /** Network filter only. */
  stat_prefix?: string;
}

/** An HTTP filter (`HttpFilter`) or a network filter (`listener.v3.Filter`): both are a name and a typed config. */
export interface RbacFilter {
  name: typeof RBAC_HTTP_FILTER_NAME | typeof RBAC_NETWORK_FILTER_NAME;
  typed_config: { '@type': typeof RBAC_HTTP_TYPE_URL | typeof RBAC_NETWORK_TYPE_URL } & RbacFilterConfig;
}

export interface BuildRbacOptions {
  /** The mesh trust domain (`cluster.local` by default in mesh config). */
  trustDomain: string;
  /** Further trust domains that name the same workloads. */
  trustDomainAliases?: readonly string[];
  /** A TCP filter chain: network RBAC filters, HTTP-only fields dropped fail-safe. */
  forTcp: boolean;
}

/** A rule the builder left out, and why (for debug output and logs; never an error). */
export interface SkippedRule {
  readonly policy: string;
  readonly problem: string;
}

export interface BuiltRbac {
  /** In the order they go into the chain: AUDIT, DENY, ALLOW. Empty when no policy applies. */
  readonly filters: readonly RbacFilter[];
  readonly skipped: readonly SkippedRule[];
}

/** `ns[<ns>]-policy[<name>]-rule[<i>]`: the key of one rule in the RBAC policy map. */
export function rbacPolicyName(namespace: string, name: string, ruleIndex: number): string {
  return `ns[${namespace}]-policy[${name}]-rule[${ruleIndex}]`;
}

const ACTIONS: ReadonlyArray<{ readonly action: 'AUDIT' | 'DENY' | 'ALLOW'; readonly rbac: RbacAction }> = [
  { action: 'AUDIT', rbac: 'LOG' },
  { action: 'DENY', rbac: 'DENY' },
  { action: 'ALLOW', rbac: 'ALLOW' },
];

function isDryRun(policy: AuthorizationPolicy): boolean {
  return policy.metadata.annotations?.[DRY_RUN_ANNOTATION]?.toLowerCase() === 'true';
}

function sortedPolicies(policies: Map<string, RbacPolicy>): Record<string, RbacPolicy> {
  return Object.fromEntries([...policies.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function shadowStatPrefix(shadow: RbacRules | undefined): string {
  // As the reference: a filter without shadow rules reads as ALLOW (the enum's zero value).
  const action = shadow?.action ?? 'ALLOW';
  if (action === 'ALLOW') return SHADOW_ALLOW_STAT_PREFIX;
  if (action === 'DENY') return SHADOW_DENY_STAT_PREFIX;
  return '';
}

/**
 * The RBAC filters for the AuthorizationPolicies that select one workload (selection is the
 * caller's). No AUDIT, DENY or ALLOW policy: no filter, everything is allowed. An ALLOW filter
 * denies what none of its policies match, so ALLOW policies without `rules` deny everything and
 * an ALLOW filter whose rules were all dropped on TCP has empty policies and denies everything.
 * CUSTOM policies are not handled here (they need extension providers and ext_authz).
 */
export function buildRbac(policies: readonly AuthorizationPolicy[], options: BuildRbacOptions): BuiltRbac {
  const trustDomains = [options.trustDomain, ...(options.trustDomainAliases ?? [])];
  const filters: RbacFilter[] = [];
  const skipped: SkippedRule[] = [];

  for (const { action, rbac } of ACTIONS) {
    const selected = policies.filter((policy) => (policy.spec.action ?? 'ALLOW') === action);
    if (selected.length === 0) continue;
    const enforced = new Map<string, RbacPolicy>();
    const shadow = new Map<string, RbacPolicy>();
    let hasEnforced = false;
    let hasShadow = false;
    for (const policy of selected) {
      const dryRun = isDryRun(policy);
      if (dryRun) hasShadow = true;
      else hasEnforced = true;
      const target = dryRun ? shadow : enforced;
      const namespace = policy.metadata.namespace ?? '';
      const rules = policy.spec.rules ?? [];
      if (rules.length === 0) {
        target.set(rbacPolicyName(namespace, policy.metadata.name, 0), matchNeverPolicy());
        continue;
      }
      rules.forEach((rule, index) => {
        const name = rbacPolicyName(namespace, policy.metadata.name, index);
        const result = buildRulePolicy(rule, { policyNamespace: namespace, trustDomains }, options.forTcp, rbac);
        if (result.ok) target.set(name, result.policy);
        else skipped.push({ policy: name, problem: result.problem });
      });
    }
    const rulesOf = (map: Map<string, RbacPolicy>): RbacRules => ({ action: rbac, policies: sortedPolicies(map) });
    const shadowRules = hasShadow ? rulesOf(shadow) : undefined;
    const config: RbacFilterConfig = {
      ...(hasEnforced ? { rules: rulesOf(enforced) } : {}),
      ...(shadowRules ? { shadow_rules: shadowRules } : {}),
      shadow_rules_stat_prefix: shadowStatPrefix(shadowRules),
    };
    filters.push(
      options.forTcp
        ? { name: RBAC_NETWORK_FILTER_NAME, typed_config: { '@type': RBAC_NETWORK_TYPE_URL, ...config, stat_prefix: TCP_STAT_PREFIX } }
        : { name: RBAC_HTTP_FILTER_NAME, typed_config: { '@type': RBAC_HTTP_TYPE_URL, ...config } },
    );
  }
  return { filters, skipped };
}
