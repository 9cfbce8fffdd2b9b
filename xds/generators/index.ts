// The xDS generators: pure functions of (proxy, push context, request) over an immutable push
// context, one folder per proxy type: sidecar/ (LDS, RDS, CDS, EDS), gateway/ (the ingress
// gateway's listeners, routes and clusters) and grpc/ (proxyless gRPC). Each folder keeps its
// golden cases in testdata/<area>/.
export {
  BLACKHOLE_CLUSTER,
  PASSTHROUGH_CLUSTER,
  inboundClusterName,
  outboundClusterName,
  parseClusterName,
  type ParsedClusterName,
} from '../model/cluster-names.js';
export { inboundPortsOf, workloadOfProxy, type InboundPort } from './proxy-workload.js';
export { buildContextFindings } from './context-findings.js';
export { buildSidecarClusters, isEdsCluster, type BuildSidecarClustersOptions, type ClusterResource } from './sidecar/sidecar-clusters.js';
export { buildClusterLoadAssignment, endpointsForCluster, type ClusterLoadAssignmentResource } from './cluster-load-assignment.js';
export { newSidecarCdsGenerator } from './sidecar/sidecar-cds-generator.js';
export { newSidecarEdsGenerator } from './sidecar/sidecar-eds-generator.js';
export { newSidecarRdsGenerator } from './sidecar/sidecar-rds-generator.js';
export {
  buildDefaultRoute,
  buildSidecarRouteConfiguration,
  parseSidecarRouteName,
  type RouteConfigurationResource,
} from './sidecar/sidecar-route-configuration.js';
export { buildVirtualServiceRoutes, type RouteResource, type VirtualServiceRouteInput, type VirtualServiceRouteOptions } from './virtual-service-routes.js';
export { buildVirtualHostDomains } from './virtual-host-domains.js';
export { buildRouteMatch, envoyHeaderMatcher, envoyStringMatcher, matchAppliesTo } from './route-match.js';
export { buildRetryPolicy, defaultRetryPolicy } from './route-retry-policy.js';
export {
  buildSidecarListeners,
  INBOUND_PORT,
  OUTBOUND_PORT,
  VIRTUAL_INBOUND,
  VIRTUAL_OUTBOUND,
  type BuildSidecarListenersOptions,
  type ListenerResource,
} from './sidecar/sidecar-listeners.js';
export { newSidecarLdsGenerator } from './sidecar/sidecar-lds-generator.js';
export { httpConnectionManager, pathNormalizationOptions, tcpProxy, ROUTER_FILTER } from './http-connection-manager.js';
export { buildGatewayListeners, type BuildGatewayListenersOptions } from './gateway/gateway-listeners.js';
export { newGatewayLdsGenerator, newGatewayRdsGenerator } from './gateway/gateway-generators.js';
export { gatewayServersByPort } from './gateway/gateway-config.js';
export { intersectHosts, virtualServicesOf } from './gateway/gateway-virtual-services.js';
export { newGrpcGenerators, GRPC_SERVER_LISTENER_PREFIX } from './grpc/grpc-generators.js';
export { buildNameTable, newNameTableGenerator, type NameInfo } from './nds/index.js';
export { buildInboundClusters, buildOutboundClusters } from './sidecar/sidecar-clusters.js';
export {
  mergeGateways,
  selectedGateways,
  serverKind,
  gatewayKey,
  type GatewayListenerSpec,
  type GatewaySelectionOptions,
  type GatewayServerEntry,
  type MergedGateway,
  type RejectedServer,
  type ServerKind,
} from './gateway/gateway-config.js';
export { resolveGatewayName, virtualServiceForGateway, virtualServicesForGateway } from './gateway/gateway-virtual-services.js';
export { buildServerTlsContext } from './gateway/gateway-tls.js';
export { buildGatewayRouteConfiguration, type BuildGatewayRoutesOptions } from './gateway/gateway-routes.js';
export { buildGatewayClusters, gatewayDestinationHosts, type BuildGatewayClustersOptions } from './gateway/gateway-clusters.js';
export { newGatewayCdsGenerator, type GatewayRdsOptions } from './gateway/gateway-generators.js';
export {
  newGatewaySecretGenerator,
  secretNamespaceOf,
  type GatewaySecretGeneratorOptions,
  type SecretRefusal,
  type SecretRefusalEvent,
} from './gateway/gateway-secret-generator.js';
