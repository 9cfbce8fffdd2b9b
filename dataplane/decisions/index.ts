// Decision functions of the embedded data plane: pure, no sockets. The data plane calls exactly these.
export * from './facts.js';
export { ConfigRejection, compiling } from './config-rejection.js';
export { compileAccessLogs, FILE_ACCESS_LOG_TYPE, type AccessLogSink } from './access-log.js';
export { compileLogFormat, type AccessLogEntry, type LogFormatConfig } from './access-log-format.js';
export { compileStringMatcher, compileFullMatchRegex, type FullMatchRegex, type StringMatcherConfig, type StringPredicate } from './string-matcher.js';
export { compileHeaderMatcher, headerValue, type HeaderMatcherConfig } from './header-matcher.js';
export { compileMetadataMatcher, compileValueMatcher, type MetadataMatcherConfig, type ValueMatcherConfig } from './metadata-matcher.js';
export { compileCidrRanges, type CidrRangeConfig } from './cidr.js';
export { compileUriTemplate } from './uri-template.js';
export { compileRbacFilter, RbacConfigError, type RbacFilterConfig, type RbacInput, type RbacVerdict } from './rbac.js';
export { selectFilterChain, type FilterChainLike, type FilterChainMatchConfig } from './filter-chain-match.js';
export { compileJwtAuthn, type JwtAuthenticationConfig, type JwtFailure, type JwtProviderConfig, type JwtVerdict, type JwksFetcher } from './jwt-authn.js';
export { compileRouteMatch, splitPath, type RouteMatchConfig } from './route-match.js';
export { compileRouteConfiguration, type RouteConfigurationConfig, type RouteContext, type RouteDecision } from './route-configuration.js';
export { compilePathNormalization, type NormalizedPath, type PathNormalizationConfig } from './path-normalization.js';
export { compileClientCertHeader, XFCC_HEADER, type ClientCertHeaderConfig } from './client-cert-header.js';
export {
  compileUpstreamTls,
  decodeCommonTlsContext,
  dnsNameMatches,
  TRANSPORT_SOCKET_MATCH_FILTER,
  type ClusterTlsConfig,
  type SanType,
  type TlsContextSettings,
  type UpstreamTls,
} from './upstream-tls.js';
export { durationMs, timeoutMs, type DurationConfig } from './duration.js';
export { httpStatusCode } from './http-status.js';
export { compileListStringMatcher, type ListStringMatcherConfig } from './list-string-matcher.js';
export { applyHeaderMutations, type HeaderValues } from './header-mutation.js';
export {
  compileExtAuthzHttpSettings,
  compileExtAuthzNetworkSettings,
  DEFAULT_GRPC_TIMEOUT_MS,
  ExtAuthzConfigError,
  type ExtAuthzConfig,
  type ExtAuthzHttpSettings,
  type ExtAuthzNetworkSettings,
  type GrpcServiceConfig,
  type HttpServiceConfig,
  type NetworkExtAuthzConfig,
} from './ext-authz-config.js';
export {
  buildHttpCheckCall,
  buildHttpCheckRequest,
  buildNetworkCheckRequest,
  PARTIAL_BODY_HEADER,
  type CheckConnection,
  type CheckHttpRequest,
} from './ext-authz-check-request.js';
export { readGrpcAnswer, readHttpAnswer, HEADERS_TO_REMOVE_HEADER, type ExtAuthzResult } from './ext-authz-answer.js';
export {
  compileExtAuthzHttpFilter,
  compileExtAuthzNetworkFilter,
  type ExtAuthzHttpInput,
  type ExtAuthzHttpStep,
  type ExtAuthzNetworkInput,
  type ExtAuthzNetworkStep,
} from './ext-authz-filter.js';
export { httpExtAuthzCounters, networkExtAuthzCounters, networkActiveGauge } from './ext-authz-stats.js';
export type * from './ext-authz-types.js';
export { HTTP_EXT_AUTHZ_TYPE, NETWORK_EXT_AUTHZ_TYPE, HTTP_RBAC_FILTER, NETWORK_RBAC_FILTER } from './envoy-types.js';
export {
  compileProxyDecisions,
  type AcceptedChain,
  type ClusterConfig,
  type ClusterLoadAssignmentConfig,
  type ConnectionDecision,
  type DownstreamTls,
  type FilterChainConfig,
  type HttpDecision,
  type ListenerConfig,
  type ProxyDecisions,
  type ProxyResources,
  type RequestContext,
  type TcpDecision,
  type UpstreamChooser,
  type UpstreamDecision,
} from './proxy-decisions.js';
export { recordedTokenValue, replayFacts, sameVerdict, verdictOf } from './recorded-traffic.js';
export type {
  RecordedConnection,
  RecordedHttp,
  RecordedRequest,
  RecordedSightings,
  RecordedToken,
  RecordedTokenVerifier,
  RequestVerdict,
} from './recorded-request.js';
export { NEVER_KEPT_HEADERS, policyReadable, type PolicyReadable } from './policy-readable.js';
