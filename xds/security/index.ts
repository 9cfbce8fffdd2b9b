// Security builders: peer authentication composition and AuthorizationPolicy → Envoy RBAC. Pure functions.
export {
  RBAC_HTTP_FILTER_NAME,
  RBAC_HTTP_TYPE_URL,
  RBAC_NETWORK_FILTER_NAME,
  RBAC_NETWORK_TYPE_URL,
  SHADOW_ALLOW_STAT_PREFIX,
  SHADOW_DENY_STAT_PREFIX,
  TCP_STAT_PREFIX,
  buildRbac,
  rbacPolicyName,
  type BuildRbacOptions,
  type BuiltRbac,
  type RbacFilter,
  type RbacFilterConfig,
  type SkippedRule,
} from './rbac-builder.js';
export { JWT_FILTER_NAME, JWT_PAYLOAD_KEY, URI_TEMPLATE_TYPE_URL, buildRulePolicy, type RuleContext, type RuleResult } from './authz-rule-model.js';
export { DEFAULT_TRUST_DOMAIN, expandTrustDomainAliases, expandTrustDomainValues } from './trust-domain-aliases.js';
export type { RbacAction, RbacPermission, RbacPolicy, RbacPrincipal, RbacRules } from './rbac-types.js';
export type { CidrRange, HeaderMatcher, MetadataMatcher, StringMatcher, ValueMatcher } from './envoy-matchers.js';
export { newClientTlsHook, newMeshClientTlsHook, clientTlsSettingsFor, meshSni, type ClientTlsHookOptions } from './client-tls.js';
export { adsSecretConfig, sdsSecretConfig, SDS_CLUSTER, WORKLOAD_SECRET, ROOT_SECRET } from './sds-secret-config.js';
export { credentialResourceName, isAgentSecret, parseCredentialResource, KUBERNETES_SECRET_PREFIX, type CredentialResource } from './credential-names.js';
export { buildJwtAuthnFilter, JWT_AUTHN_TYPE, type JwksSource, type JwtAuthnOptions } from './jwt-authn-builder.js';
export { newInboundSecurityFilters, SECURITY_PLUGINS, type InboundSecurityFiltersOptions, type SecurityPlugin } from './inbound-security-filters.js';
export {
  BAD_CUSTOM_ACTION_SUFFIX,
  DRY_RUN_CUSTOM_STAT_PREFIX,
  EXT_AUTHZ_HTTP_FILTER_NAME,
  EXT_AUTHZ_HTTP_TYPE_URL,
  EXT_AUTHZ_NETWORK_FILTER_NAME,
  EXT_AUTHZ_NETWORK_TYPE_URL,
  EXT_AUTHZ_SHADOW_POLICY_KEY,
  EXT_AUTHZ_SHADOW_STAT_PREFIX,
  buildCustomAuthz,
  customPolicyName,
  type BuildCustomAuthzOptions,
  type BuiltCustomAuthz,
  type CustomProblem,
} from './ext-authz-builder.js';
export { newCustomProblemReporter } from './custom-problem-reporter.js';
export { newJwksResolver, JwksFetchError, type JwksResolver, type JwksResolverOptions } from './jwks-resolver.js';
export { serviceSubjectAltNames, upstreamAlpn, SYSTEM_CA_CERTIFICATES, MESH_TLS_MATCH, DISABLED_TLS_MATCH } from './client-tls.js';
export {
  buildMeshTlsSocket,
  buildUserTlsSocket,
  RAW_BUFFER_SOCKET,
  UPSTREAM_TLS_TYPE,
  TLS_TRANSPORT_SOCKET,
  CREDENTIAL_CA_SUFFIX,
  type MeshTlsSocketInput,
  type UserTlsSocketInput,
} from './client-tls-context.js';
