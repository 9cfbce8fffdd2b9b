import { compileUpstreamTls, type ClusterConfig, type ClusterLoadAssignmentConfig } from '../../dataplane/decisions/index.js';
import type { EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import { proxyResourcesOf } from './dump-resources.js';

/**
 * How a client proxy connects to `address:port`, from its own config: the outbound clusters that
 * hold that endpoint, and the transport socket their TLS settings pick for it (auto mutual TLS by
 * the endpoint's `tlsMode`, or a DestinationRule's mode). Undefined when no cluster holds it.
 */
export function clientTransportTo(dump: EnvoyConfigDump, address: string, port: number): 'mtls' | 'plaintext' | undefined {
  const resources = proxyResourcesOf(dump);
  for (const [name, cluster] of resources.clusters) {
    if (!name.startsWith('outbound|')) continue;
    const assignment =
      resources.endpoints.get((cluster as ClusterConfig).eds_cluster_config?.service_name || name) ?? (cluster as ClusterConfig).load_assignment;
    const endpoint = endpointsOf(assignment).find((e) => e.address === address && e.port === port);
    if (!endpoint) continue;
    const tls = compileUpstreamTls(cluster)(endpoint.metadata);
    return tls.kind === 'tls' && tls.certificateSecrets.length > 0 ? 'mtls' : 'plaintext';
  }
  return undefined;
}

function endpointsOf(assignment: ClusterLoadAssignmentConfig | undefined): { address: string; port: number; metadata?: Record<string, unknown> }[] {
  return (assignment?.endpoints ?? []).flatMap((locality) =>
    (locality.lb_endpoints ?? []).flatMap((lb) => {
      const socket = lb.endpoint?.address?.socket_address;
      return socket
        ? [{ address: socket.address, port: socket.port_value ?? 0, ...(lb.metadata?.filter_metadata ? { metadata: lb.metadata.filter_metadata } : {}) }]
        : [];
    }),
  );
}
