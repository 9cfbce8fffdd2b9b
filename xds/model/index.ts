// The push model: the immutable push context with its indexes, and what generators and security
// filters share (policy selection, peer authentication, endpoint TLS, the filter and
// transport-socket hooks). Imports neither xds/generators/ nor xds/security/.
export {
  buildPushContext,
  isBoundToMesh,
  newPushContextBuilder,
  resolveRuleHost,
  servicePortKey,
  type IndexedDestinationRule,
  type IndexedGateway,
  type IndexedVirtualService,
  type MeshVirtualServiceIndex,
  type PushContext,
  type PushContextBuilder,
} from './push-context.js';
export { destinationRuleFor, loadBalancerFor, subsetOf } from './destination-rule-policy.js';
export { isVisibleTo, virtualServiceFor } from './virtual-service-selection.js';
export { isHttpRoutable, servicePortProtocol, type ServicePortProtocol } from './service-port-protocol.js';
export { NO_SECURITY_FILTERS, type SecurityFilterInput, type SecurityFilters, type TypedFilter } from './security-filters.js';
export type { ClusterTransportSocket, ClusterTransportSocketHook, ClusterTransportSocketInput } from './cluster-transport-socket.js';
export { MESH_TLS_MODE, TRANSPORT_SOCKET_MATCH_KEY, endpointMeshTlsOf, type EndpointMeshTls } from './endpoint-mesh-tls.js';
export {
  DEFAULT_MTLS_MODE,
  composePeerAuthentication,
  mtlsModeForPort,
  type ComposePeerAuthenticationInput,
  type ComposedPeerAuthentication,
  type EffectiveMtlsMode,
} from './peer-authentication.js';
export { newPolicyIndex, type PolicyIndex, type SelectablePolicy } from './policy-index.js';
export { isServiceVisible, serviceVisibilityScope, visibleServices } from './service-visibility.js';
export { allocatedAddressesFor, autoAllocatedAddresses, autoAllocationKey, usesAutoAllocation, type AllocatedAddresses } from './auto-allocation.js';
