import { labelsMatch } from '../../names/index.js';
import { type Endpoint } from '../../controllers/index.js';
import { jsonToStruct } from '../envoy/struct-json.js';
import type { Proxy } from '../proxy.js';
import { parseClusterName } from '../model/cluster-names.js';
import { destinationRuleFor, subsetOf } from '../model/destination-rule-policy.js';
import { servicePortKey, type PushContext } from '../model/push-context.js';
import { endpointMeshTlsOf, MESH_TLS_MODE, TRANSPORT_SOCKET_MATCH_KEY } from '../model/endpoint-mesh-tls.js';

/** An Envoy `ClusterLoadAssignment` message in snake_case. */
export type ClusterLoadAssignmentResource = { readonly cluster_name: string } & Readonly<Record<string, unknown>>;

const MESH_TLS_METADATA = { filter_metadata: { [TRANSPORT_SOCKET_MATCH_KEY]: jsonToStruct({ tlsMode: MESH_TLS_MODE }) } };

/** The endpoints behind an outbound cluster name for this proxy: ready ones, a subset's labels applied. */
export function endpointsForCluster(push: PushContext, proxy: Proxy, clusterName: string): readonly Endpoint[] {
  const parsed = parseClusterName(clusterName);
  if (!parsed || parsed.direction !== 'outbound') return [];
  const service = push.serviceByHost.get(parsed.hostname);
  if (!service) return [];
  const endpoints = (push.endpointsByServicePort.get(servicePortKey(service.hostname, parsed.port)) ?? []).filter((endpoint) => endpoint.ready);
  if (parsed.subset === '') return endpoints;
  const subset = subsetOf(destinationRuleFor(push, proxy, service)?.rule, parsed.subset);
  if (!subset) return [];
  const labels = subset.labels ?? {};
  return endpoints.filter((endpoint) => labelsMatch(labels, endpoint.labels));
}

/**
 * The load assignment of one EDS cluster: its endpoints (address and target port) in one
 * locality weighted by the sum of their weights (a WorkloadEntry's `weight`, else 1). Endpoints that take mesh mutual TLS carry `{tlsMode: mesh}`
 * for the cluster's transport socket matches: those with a sidecar whose workload's
 * PeerAuthentication (port level included) does not resolve to DISABLE on the endpoint's port,
 * so a workload-level DISABLE works without a DestinationRule too. An unknown cluster gets an
 * empty assignment, so Envoy does not wait for it.
 */
export function buildClusterLoadAssignment(push: PushContext, proxy: Proxy, clusterName: string): ClusterLoadAssignmentResource {
  const endpoints = endpointsForCluster(push, proxy, clusterName);
  if (endpoints.length === 0) return { cluster_name: clusterName, endpoints: [] };
  const meshTls = endpointMeshTlsOf(push);
  const lbEndpoints = endpoints.map((endpoint) => ({
    endpoint: { address: { socket_address: { address: endpoint.address, port_value: endpoint.port } } },
    health_status: 'HEALTHY',
    ...(meshTls.acceptsMeshTls(endpoint) ? { metadata: MESH_TLS_METADATA } : {}),
    load_balancing_weight: { value: endpoint.weight ?? 1 },
  }));
  return {
    cluster_name: clusterName,
    endpoints: [
      { lb_endpoints: lbEndpoints, load_balancing_weight: { value: lbEndpoints.reduce((sum, endpoint) => sum + endpoint.load_balancing_weight.value, 0) } },
    ],
  };
}
