import type { ClusterConfig, ClusterLoadAssignmentConfig, ListenerConfig, ProxyResources, RouteConfigurationConfig } from '../../dataplane/decisions/index.js';
import { clustersOf, dumpOf, listenersOf, routeConfigsOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

/** A config dump's listeners, routes, clusters and (with `include_eds`) endpoints, as the data plane's decision functions read them. */
export function proxyResourcesOf(dump: EnvoyConfigDump): ProxyResources {
  const endpoints = dumpOf(dump, 'EndpointsConfigDump');
  const assignments = [...list(endpoints['static_endpoint_configs']), ...list(endpoints['dynamic_endpoint_configs'])].map(
    (entry) => (entry['endpoint_config'] as Json | undefined) ?? {},
  );
  return {
    listeners: listenersOf(dump).map(withoutType) as unknown as ListenerConfig[],
    routes: new Map(routeConfigsOf(dump).map((route) => [String(route['name'] ?? ''), withoutType(route) as unknown as RouteConfigurationConfig])),
    clusters: new Map(clustersOf(dump).map((cluster) => [String(cluster['name'] ?? ''), withoutType(cluster) as unknown as ClusterConfig])),
    endpoints: new Map(
      assignments.map((assignment) => [String(assignment['cluster_name'] ?? ''), withoutType(assignment) as unknown as ClusterLoadAssignmentConfig]),
    ),
  };
}

/** The dump writes each resource with its `@type`; the resources as delivered over xDS have none. */
function withoutType(resource: Json): Json {
  const { '@type': _type, ...rest } = resource;
  return rest;
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}
