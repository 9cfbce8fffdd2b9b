// Sidecar xDS generators: pure functions of (proxy, push context, request) over an immutable push context.
export { buildPushContext, resolveRuleHost, servicePortKey, type IndexedDestinationRule, type PushContext } from './push-context.js';
export {
  BLACKHOLE_CLUSTER,
  PASSTHROUGH_CLUSTER,
  inboundClusterName,
  outboundClusterName,
  parseClusterName,
  type ParsedClusterName,
} from './cluster-names.js';
export { destinationRuleFor, loadBalancerFor, subsetOf } from './destination-rule-policy.js';
export { envoyDuration } from './envoy-duration.js';
export { inboundPortsOf, workloadOfProxy, type InboundPort } from './proxy-workload.js';
export {
  buildSidecarClusters,
  isEdsCluster,
  type BuildSidecarClustersOptions,
  type ClusterResource,
  type ClusterTransportSocket,
  type ClusterTransportSocketHook,
  type ClusterTransportSocketInput,
} from './sidecar-clusters.js';
export {
  MESH_TLS_MODE,
  TRANSPORT_SOCKET_MATCH_KEY,
  buildClusterLoadAssignment,
  endpointsForCluster,
  type ClusterLoadAssignmentResource,
} from './cluster-load-assignment.js';
export { newSidecarCdsGenerator } from './sidecar-cds-generator.js';
export { newSidecarEdsGenerator } from './sidecar-eds-generator.js';
