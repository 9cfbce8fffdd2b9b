// The policy API: the kinds (PeerAuthentication, RequestAuthentication, AuthorizationPolicy,
// DestinationRule, Gateway, VirtualService, ServiceEntry, WorkloadEntry, WorkloadGroup), their zod schemas and semantic validation with
// field paths, the generated CRD manifests (generated/), and the mesh config schema and loader
// (mesh-config/), read by the daemon and the agent alike. Depends on no other package of ours
// but the runtime's error base.
export {
  KINDS,
  KIND_NAMES,
  UNTRANSLATED_KINDS,
  SECURITY_GROUP,
  NETWORKING_GROUP,
  SECURITY_VERSION,
  NETWORKING_VERSION,
  SECURITY_API_VERSION,
  NETWORKING_API_VERSION,
  SECURITY_VERSIONS,
  NETWORKING_VERSIONS,
  apiVersionOf,
  servedApiVersionsOf,
  type KindInfo,
  type KindName,
} from './kinds.js';
export { RESOURCE_SCHEMAS, SPEC_SCHEMAS, type ResourceOf, type TypedResource } from './resource-schemas.js';
export { checkResource, completeValidation, validateResource, type ResourceCheck, type ValidationResult } from './validate.js';
export { shapeForAnalysis, type ShapedResource } from './resource-shape.js';
export { regexProblem } from './validate-virtual-service.js';
export type { ValidateOptions } from './validate-options.js';
export { renderPath, type ValidationIssue } from './validation-issue.js';
export { DURATION_PATTERN, parseDurationMs, parseDurationNanos } from './duration.js';
export { objectMetaSchema, statusSchema, type ObjectMeta } from './object-meta-schema.js';
export {
  durationSchema,
  durationOrZeroSchema,
  exportToSchema,
  percentSchema,
  policyTargetReferenceSchema,
  portNumberSchema,
  portSelectorSchema,
  stringMatchSchema,
  workloadSelectorSchema,
} from './common-schemas.js';
export {
  MTLS_MODES,
  mutualTlsSchema,
  peerAuthenticationSchema,
  peerAuthenticationSpecSchema,
  type MtlsMode,
  type PeerAuthentication,
  type PeerAuthenticationSpec,
} from './peer-authentication-schema.js';
export {
  claimToHeaderSchema,
  jwtHeaderSchema,
  jwtRuleSchema,
  requestAuthenticationSchema,
  requestAuthenticationSpecSchema,
  type JwtRule,
  type RequestAuthentication,
  type RequestAuthenticationSpec,
} from './request-authentication-schema.js';
export {
  AUTHORIZATION_ACTIONS,
  authorizationPolicySchema,
  authorizationPolicySpecSchema,
  conditionSchema,
  extensionProviderSchema,
  operationSchema,
  ruleSchema,
  sourceSchema,
  type AuthorizationAction,
  type AuthorizationCondition,
  type AuthorizationOperation,
  type AuthorizationPolicy,
  type AuthorizationPolicySpec,
  type AuthorizationRule,
  type AuthorizationSource,
} from './authorization-policy-schema.js';
export {
  CLIENT_TLS_MODES,
  H2_UPGRADE_POLICIES,
  PROXY_PROTOCOL_VERSIONS,
  SIMPLE_LB_POLICIES,
  clientTlsSettingsSchema,
  connectionPoolSettingsSchema,
  destinationRuleSchema,
  destinationRuleSpecSchema,
  loadBalancerSettingsSchema,
  outlierDetectionSchema,
  portTrafficPolicySchema,
  subsetSchema,
  trafficPolicySchema,
  type ClientTlsMode,
  type ClientTlsSettings,
  type ConnectionPoolSettings,
  type DestinationRule,
  type DestinationRuleSpec,
  type LoadBalancerSettings,
  type OutlierDetection,
  type PortTrafficPolicy,
  type Subset,
  type TrafficPolicy,
} from './destination-rule-schema.js';
export {
  SERVER_TLS_MODES,
  TLS_PROTOCOL_VERSIONS,
  gatewayPortSchema,
  gatewaySchema,
  gatewaySpecSchema,
  serverSchema,
  serverTlsSettingsSchema,
  type Gateway,
  type GatewayServer,
  type GatewaySpec,
  type ServerTlsMode,
  type ServerTlsSettings,
} from './gateway-schema.js';
export {
  destinationSchema,
  httpMatchRequestSchema,
  httpRouteDestinationSchema,
  httpRouteSchema,
  routeDestinationSchema,
  tcpRouteSchema,
  tlsRouteSchema,
  virtualServiceSchema,
  virtualServiceSpecSchema,
  type Destination,
  type HttpMatchRequest,
  type HttpRoute,
  type HttpRouteDestination,
  type RouteDestination,
  type TcpRoute,
  type TlsRoute,
  type VirtualService,
  type VirtualServiceSpec,
} from './virtual-service-schema.js';

// The mesh config (MeshConfig, its ProxyConfig defaults): schema, defaults and loader, read by the daemon and the agent.
export * from './mesh-config/index.js';
export { SERVICE_ENTRY_LOCATIONS, SERVICE_ENTRY_RESOLUTIONS, type ServiceEntry, type ServiceEntrySpec, type ServicePort } from './service-entry-schema.js';
export { type WorkloadEntry, type WorkloadEntrySpec } from './workload-entry-schema.js';
export { type ReadinessProbe, type WorkloadGroup, type WorkloadGroupSpec } from './workload-group-schema.js';
