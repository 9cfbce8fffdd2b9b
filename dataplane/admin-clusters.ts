import type { ConfigSnapshot } from './config-state.js';

interface LbEndpoint {
  endpoint?: { address?: { socket_address?: { address?: string; port_value?: number } } };
  health_status?: string;
  load_balancing_weight?: number;
}
interface Assignment {
  endpoints?: { locality?: Record<string, unknown>; lb_endpoints?: LbEndpoint[] }[];
}

/** Each cluster's hosts: its EDS assignment, or its own `load_assignment` when static. */
function hostsOf(snapshot: ConfigSnapshot): { name: string; hosts: { endpoint: LbEndpoint; locality: Record<string, unknown> | undefined }[] }[] {
  return [...snapshot.resources.clusters].map(([name, cluster]) => {
    const service = (cluster as { eds_cluster_config?: { service_name?: string } }).eds_cluster_config?.service_name || name;
    const assignment = (
      ['STATIC', 'STRICT_DNS', 'LOGICAL_DNS'].includes((cluster as { type?: string }).type ?? '')
        ? (cluster as { load_assignment?: Assignment }).load_assignment
        : snapshot.resources.endpoints.get(service)
    ) as Assignment | undefined;
    const hosts = (assignment?.endpoints ?? []).flatMap((locality) =>
      (locality.lb_endpoints ?? []).map((endpoint) => ({ endpoint, locality: locality.locality })),
    );
    return { name, hosts };
  });
}

/** `/clusters`: Envoy's text form, `<cluster>::<ip>:<port>::health_flags::<status>` lines. */
export function clustersText(snapshot: ConfigSnapshot): string {
  const lines: string[] = [];
  for (const { name, hosts } of hostsOf(snapshot)) {
    for (const { endpoint } of hosts) {
      const socket = endpoint.endpoint?.address?.socket_address;
      if (socket) lines.push(`${name}::${socket.address}:${socket.port_value ?? 0}::health_flags::${endpoint.health_status ?? 'healthy'}`);
    }
    lines.push(`${name}::observability_name::${name}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `/clusters?format=json`: Envoy's `Clusters` message (`cluster_statuses` with `host_statuses`). */
export function clustersJson(snapshot: ConfigSnapshot): { cluster_statuses: object[] } {
  return {
    cluster_statuses: hostsOf(snapshot).map(({ name, hosts }) => ({
      name,
      observability_name: name,
      added_via_api: true,
      host_statuses: hosts
        .filter(({ endpoint }) => endpoint.endpoint?.address?.socket_address)
        .map(({ endpoint, locality }) => ({
          address: { socket_address: endpoint.endpoint?.address?.socket_address },
          health_status: { eds_health_status: endpoint.health_status && endpoint.health_status !== 'UNKNOWN' ? endpoint.health_status : 'HEALTHY' },
          weight: endpoint.load_balancing_weight ?? 1,
          ...(locality ? { locality } : {}),
        })),
    })),
  };
}
