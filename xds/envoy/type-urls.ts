/** The xDS type URLs we serve, as literals, and their short names for logs and metric labels. */
export const TYPE_PREFIX = 'type.googleapis.com/';

export const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
export const ENDPOINT_TYPE = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
export const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';
export const ROUTE_TYPE = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
export const SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
export const CLIENT_CONFIG_TYPE = 'type.googleapis.com/envoy.service.status.v3.ClientConfig';
/** Per-proxy sync status over xDS (for `meshctl proxy-status`). */
export const DEBUG_SYNCZ_TYPE = 'mesh.io/debug/syncz';
/**
 * The name table of the agent's DNS proxy (NDS): the hosts a proxy may call and their addresses.
 * Asked for by the agent itself, on the proxy's stream; never by the data plane.
 */
export const NAME_TABLE_TYPE = 'type.googleapis.com/mesh.networking.nds.v1.NameTable';
/**
 * The agent's health report on the proxy's stream (the reference's `istio.v1.HealthInformation`):
 * a DiscoveryRequest without `error_detail` says healthy, one with `error_detail {code: 13, message}`
 * unhealthy. The daemon records it on the proxy's WorkloadEntry and never answers it.
 */
export const HEALTH_INFORMATION_TYPE = 'type.googleapis.com/mesh.v1.HealthInformation';
/** The daemon's debug views over xDS: the resource name is the view (`syncz`, `config_dump?proxyID=<pod>.<ns>`…); the resource is its JSON. */
export const DEBUG_TYPE = 'mesh.io/debug';

export const XDS_TYPE_URLS = {
  cds: CLUSTER_TYPE,
  eds: ENDPOINT_TYPE,
  lds: LISTENER_TYPE,
  rds: ROUTE_TYPE,
  sds: SECRET_TYPE,
} as const;

export type XdsShortType = keyof typeof XDS_TYPE_URLS;
export type XdsTypeUrl = (typeof XDS_TYPE_URLS)[XdsShortType];

/** The order of a push, as the reference: clusters before endpoints, listeners before routes. */
export const PUSH_ORDER: readonly string[] = [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE];

const SHORT_BY_URL: ReadonlyMap<string, XdsShortType> = new Map(Object.entries(XDS_TYPE_URLS).map(([short, url]) => [url, short as XdsShortType]));

/** `cds`, `eds`, … for the known types; the message name (after the last `/` or `.`) otherwise. */
export function shortType(typeUrl: string): string {
  const known = SHORT_BY_URL.get(typeUrl);
  if (known) return known;
  const tail = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
  return tail.slice(tail.lastIndexOf('.') + 1) || typeUrl;
}

/** A bounded metric label for a type URL: the short name of a known type, else `other`. */
export function metricType(typeUrl: string): string {
  return SHORT_BY_URL.get(typeUrl) ?? 'other';
}

/**
 * Wildcard types: the client subscribes to all of them and every state-of-the-world response
 * carries the full set, so an absent resource is a removal.
 */
export function isWildcardType(typeUrl: string): boolean {
  return typeUrl === CLUSTER_TYPE || typeUrl === LISTENER_TYPE || typeUrl === NAME_TABLE_TYPE;
}

/** Types whose new watch must force a response to the next request of the dependent type (warming). */
export function warmingDependencies(typeUrl: string): readonly string[] {
  if (typeUrl === CLUSTER_TYPE) return [ENDPOINT_TYPE];
  if (typeUrl === LISTENER_TYPE) return [ROUTE_TYPE];
  return [];
}

/** The fully qualified message name a type URL names (`envoy.config.cluster.v3.Cluster`). */
export function messageNameOf(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
}
