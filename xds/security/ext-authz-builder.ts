import type { AuthorizationPolicy, ExtAuthzProviderResolution, ResolvedExtAuthzProvider } from '../../crds/index.js';
import { envoyDuration } from '../envoy/envoy-duration.js';
import { buildRulePolicy } from './authz-rule-model.js';
import type { StringMatcher } from './envoy-matchers.js';
import { DRY_RUN_ANNOTATION } from '../../names/index.js';
import {
  RBAC_HTTP_FILTER_NAME,
  RBAC_HTTP_TYPE_URL,
  RBAC_NETWORK_FILTER_NAME,
  RBAC_NETWORK_TYPE_URL,
  TCP_STAT_PREFIX,
  type SkippedRule,
} from './rbac-builder.js';
import { matchNeverPolicy, type RbacPolicy } from './rbac-types.js';

export const EXT_AUTHZ_HTTP_FILTER_NAME = 'envoy.filters.http.ext_authz';
export const EXT_AUTHZ_HTTP_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
export const EXT_AUTHZ_NETWORK_FILTER_NAME = 'envoy.filters.network.ext_authz';
export const EXT_AUTHZ_NETWORK_TYPE_URL = 'type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz';
/** The shadow RBAC filter of a provider records the CUSTOM rule a request matched under this prefix. */
export const EXT_AUTHZ_SHADOW_STAT_PREFIX = 'mesh_ext_authz_';
export const EXT_AUTHZ_SHADOW_POLICY_KEY = `${EXT_AUTHZ_SHADOW_STAT_PREFIX}shadow_effective_policy_id`;
/** Dry-run CUSTOM rules are recorded under their own prefix: counted, never sent to the authorizer. */
export const DRY_RUN_CUSTOM_STAT_PREFIX = 'mesh_dry_run_custom_';
export const BAD_CUSTOM_ACTION_SUFFIX = '-deny-due-to-bad-CUSTOM-action';
/** As the reference: an authorizer without `timeout` is given ten minutes, not Envoy's 200 ms. */
const DEFAULT_TIMEOUT = { seconds: 600 };

/** `mesh-ext-authz-<provider>-ns[<ns>]-policy[<name>]-rule[<i>]`: the rule's name in the shadow RBAC filter. */
export function customPolicyName(provider: string, namespace: string, name: string, ruleIndex: number): string {
  return `${customPolicyPrefix(provider)}${namespace}]-policy[${name}]-rule[${ruleIndex}]`;
}

/**
 * What the provider's ext_authz filter looks for in the metadata. It ends at `ns[` so that a
 * provider whose name starts with another's (`a`, `a-ns`) never answers for the other's rules.
 */
function customPolicyPrefix(provider: string): string {
  return `mesh-ext-authz-${provider}-ns[`;
}

type Filter = { readonly name: string; readonly typed_config: { readonly '@type': string } & Readonly<Record<string, unknown>> };

/** A CUSTOM policy whose provider cannot be used: its rules are denied instead. */
export interface CustomProblem {
  /** `<namespace>/<name>`. */
  readonly policy: string;
  readonly provider: string;
  readonly problem: string;
}

export interface BuiltCustomAuthz {
  /** In chain order: per provider (sorted by name) the shadow RBAC and ext_authz pair, or the deny filter of a bad provider. */
  readonly filters: readonly Filter[];
  readonly skipped: readonly SkippedRule[];
  readonly problems: readonly CustomProblem[];
}

export interface BuildCustomAuthzOptions {
  readonly trustDomain: string;
  readonly trustDomainAliases?: readonly string[];
  readonly forTcp: boolean;
  /** The provider a policy names, resolved (mesh config and registry). */
  resolve(provider: string): ExtAuthzProviderResolution;
}

function listMatcher(headers: readonly string[] | undefined): { patterns: StringMatcher[] } | undefined {
  if (!headers?.length) return undefined;
  return {
    patterns: headers.map((header): StringMatcher => {
      if (header.startsWith('*')) return { suffix: header.slice(1), ignore_case: true };
      if (header.endsWith('*')) return { prefix: header.slice(0, -1), ignore_case: true };
      return { exact: header, ignore_case: true };
    }),
  };
}

function enabledBy(provider: string, rbacFilter: string): object {
  return { filter: rbacFilter, path: [{ key: EXT_AUTHZ_SHADOW_POLICY_KEY }], value: { string_match: { prefix: customPolicyPrefix(provider) } } };
}

function timeoutOf(text: string | undefined): object {
  return (text === undefined ? undefined : envoyDuration(text)) ?? DEFAULT_TIMEOUT;
}

/** The HTTP ext_authz filter's config, field for field as the reference generates it. */
function httpExtAuthz(provider: ResolvedExtAuthzProvider): Record<string, unknown> {
  const { settings } = provider;
  const common = {
    ...(settings.statusOnError ? { status_on_error: { code: Number(settings.statusOnError) } } : {}),
    ...(settings.failOpen ? { failure_mode_allow: true } : {}),
    ...(settings.clearRouteCache ? { clear_route_cache: true } : {}),
    transport_api_version: 'V3',
    filter_enabled_metadata: enabledBy(provider.name, RBAC_HTTP_FILTER_NAME),
    ...(settings.includeRequestBodyInCheck
      ? {
          with_request_body: {
            max_request_bytes: settings.includeRequestBodyInCheck.maxRequestBytes ?? 0,
            allow_partial_message: settings.includeRequestBodyInCheck.allowPartialMessage ?? false,
            pack_as_bytes: settings.includeRequestBodyInCheck.packAsBytes ?? false,
          },
        }
      : {}),
  };
  if (provider.kind === 'grpc') {
    return { grpc_service: { envoy_grpc: { cluster_name: provider.cluster, authority: provider.hostname }, timeout: timeoutOf(settings.timeout) }, ...common };
  }
  const http = provider.settings;
  const headersToAdd = Object.entries(http.includeAdditionalHeadersInCheck ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value }));
  const upstream = listMatcher(http.headersToUpstreamOnAllow);
  const onDeny = listMatcher(http.headersToDownstreamOnDeny);
  const onAllow = listMatcher(http.headersToDownstreamOnAllow);
  const allowed = listMatcher(http.includeRequestHeadersInCheck?.length ? http.includeRequestHeadersInCheck : http.includeHeadersInCheck);
  return {
    http_service: {
      server_uri: { uri: `http://${provider.hostname}`, cluster: provider.cluster, timeout: timeoutOf(http.timeout) },
      ...(http.pathPrefix ? { path_prefix: http.pathPrefix } : {}),
      ...(headersToAdd.length > 0 ? { authorization_request: { headers_to_add: headersToAdd } } : {}),
      ...(upstream || onDeny || onAllow
        ? {
            authorization_response: {
              ...(upstream ? { allowed_upstream_headers: upstream } : {}),
              ...(onDeny ? { allowed_client_headers: onDeny } : {}),
              ...(onAllow ? { allowed_client_headers_on_success: onAllow } : {}),
            },
          }
        : {}),
    },
    ...(allowed ? { allowed_headers: allowed } : {}),
    ...common,
  };
}

/** The network ext_authz filter: gRPC authorizers only, as the reference. */
function tcpExtAuthz(provider: ResolvedExtAuthzProvider): Record<string, unknown> | undefined {
  if (provider.kind !== 'grpc') return undefined;
  return {
    stat_prefix: TCP_STAT_PREFIX,
    grpc_service: { envoy_grpc: { cluster_name: provider.cluster, authority: provider.hostname }, timeout: timeoutOf(provider.settings.timeout) },
    ...(provider.settings.failOpen ? { failure_mode_allow: true } : {}),
    transport_api_version: 'V3',
    filter_enabled_metadata: enabledBy(provider.name, RBAC_NETWORK_FILTER_NAME),
  };
}

function sorted(policies: ReadonlyMap<string, RbacPolicy>): Record<string, RbacPolicy> {
  return Object.fromEntries([...policies.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

interface ProviderRules {
  readonly enforced: Map<string, RbacPolicy>;
  readonly dryRun: Map<string, RbacPolicy>;
  readonly policies: string[];
}

/**
 * The filters of the CUSTOM AuthorizationPolicies that select one workload, as the reference
 * builds them: per provider, a shadow RBAC filter that records which CUSTOM rule a request
 * matched (never enforcing) and the ext_authz filter that asks the authorizer only then. A
 * provider that cannot be used gets an enforcing DENY of exactly those rules instead. On TCP
 * chains: HTTP authorizers and rules testing HTTP-only fields install nothing.
 */
export function buildCustomAuthz(policies: readonly AuthorizationPolicy[], options: BuildCustomAuthzOptions): BuiltCustomAuthz {
  const trustDomains = [options.trustDomain, ...(options.trustDomainAliases ?? [])];
  const byProvider = new Map<string, ProviderRules>();
  const skipped: SkippedRule[] = [];
  for (const policy of policies) {
    if (policy.spec.action !== 'CUSTOM') continue;
    const provider = policy.spec.provider?.name ?? '';
    let rules = byProvider.get(provider);
    if (!rules) byProvider.set(provider, (rules = { enforced: new Map(), dryRun: new Map(), policies: [] }));
    const namespace = policy.metadata.namespace ?? '';
    rules.policies.push(`${namespace}/${policy.metadata.name}`);
    const target = policy.metadata.annotations?.[DRY_RUN_ANNOTATION]?.toLowerCase() === 'true' ? rules.dryRun : rules.enforced;
    const specRules = policy.spec.rules ?? [];
    if (specRules.length === 0) target.set(customPolicyName(provider, namespace, policy.metadata.name, 0), matchNeverPolicy());
    specRules.forEach((rule, index) => {
      const name = customPolicyName(provider, namespace, policy.metadata.name, index);
      const context = { policyNamespace: namespace, trustDomains };
      // A rule that tests what a TCP connection cannot answer does not apply to TCP at all.
      const strict = options.forTcp ? buildRulePolicy(rule, context, true, 'ALLOW') : undefined;
      // Otherwise as a DENY: a value that yields no matcher widens the rule, so more is checked.
      const result = strict && !strict.ok && strict.httpOnly ? strict : strict?.ok ? strict : buildRulePolicy(rule, context, options.forTcp, 'DENY');
      if (result.ok) target.set(name, result.policy);
      else skipped.push({ policy: name, problem: result.problem });
    });
  }

  const filters: Filter[] = [];
  const problems: CustomProblem[] = [];
  const rbacFilter = (config: Record<string, unknown>): Filter =>
    options.forTcp
      ? { name: RBAC_NETWORK_FILTER_NAME, typed_config: { '@type': RBAC_NETWORK_TYPE_URL, ...config, stat_prefix: TCP_STAT_PREFIX } }
      : { name: RBAC_HTTP_FILTER_NAME, typed_config: { '@type': RBAC_HTTP_TYPE_URL, ...config } };
  for (const providerName of [...byProvider.keys()].sort()) {
    const rules = byProvider.get(providerName) as ProviderRules;
    if (rules.enforced.size === 0 && rules.dryRun.size === 0) continue;
    const resolution = options.resolve(providerName);
    if (!resolution.ok) {
      for (const policy of rules.policies) problems.push({ policy, provider: providerName, problem: resolution.problem });
      if (rules.enforced.size === 0) continue;
      const denied = new Map([...rules.enforced].map(([name, policy]) => [`${name}${BAD_CUSTOM_ACTION_SUFFIX}`, policy]));
      filters.push(rbacFilter({ rules: { action: 'DENY', policies: sorted(denied) }, shadow_rules_stat_prefix: '' }));
      continue;
    }
    const extAuthz = options.forTcp ? tcpExtAuthz(resolution.provider) : httpExtAuthz(resolution.provider);
    if (!extAuthz) continue;
    if (rules.dryRun.size > 0)
      filters.push(rbacFilter({ shadow_rules: { action: 'DENY', policies: sorted(rules.dryRun) }, shadow_rules_stat_prefix: DRY_RUN_CUSTOM_STAT_PREFIX }));
    if (rules.enforced.size === 0) continue;
    filters.push(rbacFilter({ shadow_rules: { action: 'DENY', policies: sorted(rules.enforced) }, shadow_rules_stat_prefix: EXT_AUTHZ_SHADOW_STAT_PREFIX }));
    filters.push(
      options.forTcp
        ? { name: EXT_AUTHZ_NETWORK_FILTER_NAME, typed_config: { '@type': EXT_AUTHZ_NETWORK_TYPE_URL, ...extAuthz } }
        : { name: EXT_AUTHZ_HTTP_FILTER_NAME, typed_config: { '@type': EXT_AUTHZ_HTTP_TYPE_URL, ...extAuthz } },
    );
  }
  return { filters, skipped, problems };
}
