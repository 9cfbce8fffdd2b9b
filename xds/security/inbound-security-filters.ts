import type { AuthorizationPolicy } from '../../crds/index.js';
import type { SecurityFilterInput, SecurityFilters, TypedFilter } from '../generators/security-filters.js';
import { buildJwtAuthnFilter, type JwksSource } from './jwt-authn-builder.js';
import { policiesFor } from './policy-selection.js';
import { buildRbac, RBAC_HTTP_FILTER_NAME, RBAC_HTTP_TYPE_URL, RBAC_NETWORK_FILTER_NAME, RBAC_NETWORK_TYPE_URL } from './rbac-builder.js';

/** CUSTOM policies need an external authorizer the mesh does not run: they deny, fail closed. */
function customDenyFilter(policies: readonly AuthorizationPolicy[], forTcp: boolean): TypedFilter | undefined {
  const custom = policies.filter((policy) => policy.spec.action === 'CUSTOM');
  if (custom.length === 0) return undefined;
  const names = custom.map((policy) => `${policy.metadata.namespace}/${policy.metadata.name}`).join(',');
  return {
    name: forTcp ? RBAC_NETWORK_FILTER_NAME : RBAC_HTTP_FILTER_NAME,
    typed_config: {
      '@type': forTcp ? RBAC_NETWORK_TYPE_URL : RBAC_HTTP_TYPE_URL,
      rules: { action: 'DENY', policies: { [`custom-provider-unresolved[${names}]`]: { permissions: [{ any: true }], principals: [{ any: true }] } } },
      ...(forTcp ? { stat_prefix: 'tcp.' } : {}),
      shadow_rules_stat_prefix: '',
    },
  };
}

/**
 * The policy filters of a port: jwt_authn (HTTP), then CUSTOM (deny: no provider can be
 * reached), AUDIT, DENY and ALLOW RBAC from the AuthorizationPolicies that select the workload.
 */
export function newInboundSecurityFilters(options: { jwks: JwksSource }): SecurityFilters {
  const rbacFor = (input: SecurityFilterInput, forTcp: boolean): TypedFilter[] => {
    const policies = policiesFor(input.push.authorizationPolicies, input.push.rootNamespace, input.namespace, input.labels);
    if (policies.length === 0) return [];
    const custom = customDenyFilter(policies, forTcp);
    const built = buildRbac(policies, { trustDomain: input.push.meshConfig.trustDomain, trustDomainAliases: input.push.meshConfig.trustDomainAliases, forTcp });
    return [...(custom ? [custom] : []), ...(built.filters as unknown as TypedFilter[])];
  };
  return {
    http(input) {
      const jwt = buildJwtAuthnFilter(input, input.push.requestAuthentications, options.jwks);
      return [...(jwt ? [jwt] : []), ...rbacFor(input, false)];
    },
    tcp: (input) => rbacFor(input, true),
  };
}
