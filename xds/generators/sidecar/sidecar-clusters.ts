import { isIPv6 } from 'node:net';
import type { LoadBalancerSettings, Subset } from '../../../crds/index.js';
import type { Proxy } from '../../proxy.js';
import { BLACKHOLE_CLUSTER, PASSTHROUGH_CLUSTER, inboundClusterName, outboundClusterName } from '../../model/cluster-names.js';
import { configMetadata } from '../config-metadata.js';
import { destinationRuleFor, loadBalancerFor } from '../../model/destination-rule-policy.js';
import { envoyDuration } from '../../envoy/envoy-duration.js';
import type { Service, ServicePort } from '../../../controllers/index.js';
import { buildClusterLoadAssignment } from '../cluster-load-assignment.js';
import { inboundPortsOf, workloadOfProxy } from '../proxy-workload.js';
import type { PushContext } from '../../model/push-context.js';
import { visibleServices } from '../../model/service-visibility.js';
import type { ClusterTransportSocketHook } from '../../model/cluster-transport-socket.js';

/** An Envoy `Cluster` message in snake_case. */
export type ClusterResource = { readonly name: string } & Readonly<Record<string, unknown>>;

export interface BuildSidecarClustersOptions {
  /** Adds TLS (or any transport socket) to service clusters; none without it. */
  readonly clusterTransportSocket?: ClusterTransportSocketHook;
  /** PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES: a headless Service's clusters load-balance over EDS, not ORIGINAL_DST. */
  readonly edsForHeadless?: boolean;
  /**
   * PILOT_ENABLE_INBOUND_PASSTHROUGH (default on): inbound clusters pass traffic to the pod address it
   * came for (ORIGINAL_DST); off, to localhost (STATIC), as mesh config `inboundTrafficPolicy` LOCALHOST does.
   */
  readonly inboundPassthrough?: boolean;
}

const ADS_CONFIG_SOURCE = { ads: {}, resource_api_version: 'V3' } as const;
const DEFAULT_CONNECT_TIMEOUT = { seconds: 10 } as const;

/**
 * The clusters of a sidecar: per service port an EDS cluster and one per DestinationRule
 * subset, an ORIGINAL_DST (or, in LOCALHOST mode, STATIC) inbound cluster per container port
 * the proxy's own workload serves, `PassthroughCluster` and `BlackHoleCluster`. Sorted by name.
 */
export function buildSidecarClusters(proxy: Proxy, push: PushContext, options: BuildSidecarClustersOptions = {}): ClusterResource[] {
  return [...buildOutboundClusters(proxy, push, options), ...buildInboundClusters(proxy, push, options)].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
}

/**
 * The clusters every sidecar that sees the same DestinationRules shares: per service port an EDS
 * cluster and one per subset, `PassthroughCluster` and `BlackHoleCluster`.
 */
export function buildOutboundClusters(proxy: Proxy, push: PushContext, options: BuildSidecarClustersOptions = {}): ClusterResource[] {
  return outboundClusters(proxy, push, options).map((cluster) => cluster.build());
}

/** An outbound cluster's name and host, and how to build it when its bytes are not already at hand. */
export interface OutboundCluster {
  readonly name: string;
  readonly hostname: string;
  /**
   * What else its bytes depend on beyond its name and DestinationRule: a ServiceEntry's
   * resolution, ports and (for DNS) endpoints; none for a Kubernetes Service's.
   */
  readonly contentKey?: string;
  build(): ClusterResource;
}

/** The outbound clusters, each built only when asked: most pushes find their bytes in the cache. */
export function outboundClusters(proxy: Proxy, push: PushContext, options: BuildSidecarClustersOptions = {}): OutboundCluster[] {
  const connectTimeout = envoyDuration(push.connectTimeout) ?? DEFAULT_CONNECT_TIMEOUT;
  const hook = options.clusterTransportSocket;
  const clusters: OutboundCluster[] = [];

  for (const service of visibleServices(push, proxy.configNamespace)) {
    const entry = destinationRuleFor(push, proxy, service);
    const rule = entry?.rule;
    for (const servicePort of service.ports) {
      const variants: (Subset | undefined)[] = [undefined, ...(rule?.spec.subsets ?? [])];
      for (const subset of variants) {
        const name = outboundClusterName(servicePort.port, subset?.name ?? '', service.hostname);
        const lb = loadBalancerFor(rule, servicePort.port, subset);
        const resolved = service.entry
          ? entryDiscoveryOf(push, proxy, service, servicePort, name, lb)
          : isPassthroughHeadless(service, proxy, options)
            ? HEADLESS_PASSTHROUGH
            : undefined;
        // A DNS cluster without an endpoint is left out, as the reference does.
        if (resolved === null) continue;
        const build = (): ClusterResource => {
          const { lb_policy, ...discovery } = resolved?.discovery ?? discoveryOf(name, lb);
          const cluster: Record<string, unknown> = {
            name,
            ...discovery,
            connect_timeout: connectTimeout,
            lb_policy,
            ...(entry ? { metadata: configMetadata('DestinationRule', entry.namespace, entry.name) } : {}),
          };
          const socket = hook?.({
            proxy,
            push,
            clusterName: name,
            direction: 'outbound',
            service,
            servicePort,
            ...(subset ? { subset } : {}),
            ...(rule ? { destinationRule: rule } : {}),
          });
          return { ...cluster, ...socket, name };
        };
        clusters.push({ name, hostname: service.hostname, ...(resolved ? { contentKey: resolved.contentKey } : {}), build });
      }
    }
  }
  clusters.push(
    {
      name: PASSTHROUGH_CLUSTER,
      hostname: '',
      build: () => ({ name: PASSTHROUGH_CLUSTER, type: 'ORIGINAL_DST', connect_timeout: connectTimeout, lb_policy: 'CLUSTER_PROVIDED' }),
    },
    {
      name: BLACKHOLE_CLUSTER,
      hostname: '',
      build: () => ({ name: BLACKHOLE_CLUSTER, type: 'STATIC', connect_timeout: connectTimeout, load_assignment: { cluster_name: BLACKHOLE_CLUSTER } }),
    },
  );
  return clusters;
}

/**
 * The proxy's own inbound clusters: one per container port its workload serves, ORIGINAL_DST; or,
 * in LOCALHOST mode or without inbound passthrough, STATIC to the loopback address of the proxy's
 * family (an app bound to localhost only is reached, one bound to the pod address only is not).
 */
export function buildInboundClusters(proxy: Proxy, push: PushContext, options: BuildSidecarClustersOptions = {}): ClusterResource[] {
  const connectTimeout = envoyDuration(push.connectTimeout) ?? DEFAULT_CONNECT_TIMEOUT;
  const hook = options.clusterTransportSocket;
  const clusters: ClusterResource[] = [];
  const workload = workloadOfProxy(push, proxy);
  if (workload) {
    const bindAddress = proxy.ipAddresses.some((address) => isIPv6(address)) && !proxy.ipAddresses.some((address) => !isIPv6(address)) ? '::6' : '127.0.0.6';
    for (const { targetPort, service, servicePort } of inboundPortsOf(push, workload)) {
      const name = inboundClusterName(targetPort);
      const cluster: Record<string, unknown> =
        push.inboundTrafficMode === 'LOCALHOST' || options.inboundPassthrough === false
          ? {
              name,
              type: 'STATIC',
              connect_timeout: connectTimeout,
              load_assignment: {
                cluster_name: name,
                endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(bindAddress === '::6' ? '::1' : '127.0.0.1', targetPort) } }] }],
              },
            }
          : {
              name,
              type: 'ORIGINAL_DST',
              connect_timeout: connectTimeout,
              lb_policy: 'CLUSTER_PROVIDED',
              // The source address keeps the redirect rules from sending the traffic back into the proxy.
              upstream_bind_config: { source_address: { address: bindAddress, port_value: 0 } },
            };
      const socket = hook?.({ proxy, push, clusterName: name, direction: 'inbound', service, servicePort, targetPort });
      clusters.push({ ...cluster, ...socket, name });
    }
  }
  return clusters;
}

/** True for clusters whose endpoints come over EDS (what CDS/EDS consistency checks). */
export function isEdsCluster(cluster: ClusterResource): boolean {
  return cluster['type'] === 'EDS';
}

/**
 * A ServiceEntry host's cluster discovery, as the reference's `convertResolution` maps it for
 * sidecars: STATIC → EDS, DNS → STRICT_DNS and DNS_ROUND_ROBIN → LOGICAL_DNS with the endpoints
 * inline (null when there are none: no cluster), NONE → ORIGINAL_DST (the target port, when it
 * differs, overriding the destination's port) on sidecars and EDS on gateways. A DestinationRule's
 * `PASSTHROUGH` forces ORIGINAL_DST.
 */
function entryDiscoveryOf(
  push: PushContext,
  proxy: Proxy,
  service: Service,
  port: ServicePort,
  name: string,
  lb: LoadBalancerSettings | undefined,
): { discovery: ReturnType<typeof discoveryOf>; contentKey: string } | null {
  const resolution = service.entry?.resolution ?? 'STATIC';
  const targetPort = typeof port.targetPort === 'number' ? port.targetPort : port.port;
  const shape = `${resolution}|${port.port}|${targetPort}|${port.name}|${port.appProtocol ?? ''}`;
  // Gateways have no original destination to pass through to: their NONE entries are EDS clusters.
  const passthrough = resolution === 'NONE' && proxy.type !== 'router';
  if (passthrough || (!lb?.consistentHash && lb?.simple === 'PASSTHROUGH')) {
    const override = resolution === 'NONE' && targetPort !== port.port ? { original_dst_lb_config: { upstream_port_override: { value: targetPort } } } : {};
    return { discovery: { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED', ...override }, contentKey: shape };
  }
  if (resolution === 'STATIC' || resolution === 'NONE') return { discovery: discoveryOf(name, lb), contentKey: shape };
  const assignment = buildClusterLoadAssignment(push, proxy, name);
  if ((assignment['endpoints'] as unknown[]).length === 0) return null;
  const { lb_policy } = discoveryOf(name, lb);
  const discovery = {
    type: resolution === 'DNS' ? 'STRICT_DNS' : 'LOGICAL_DNS',
    lb_policy,
    dns_lookup_family: isIpv6Only(proxy) ? 'V6_ONLY' : 'V4_ONLY',
    dns_refresh_rate: envoyDuration(push.meshConfig.dnsRefreshRate ?? '60s') ?? { seconds: 60 },
    respect_dns_ttl: true,
    load_assignment: assignment,
  };
  return { discovery, contentKey: `${shape}|${discovery.dns_lookup_family}|${push.meshConfig.dnsRefreshRate ?? ''}|${JSON.stringify(assignment)}` };
}

const HEADLESS_PASSTHROUGH = { discovery: { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED' }, contentKey: 'headless' } as const;

/**
 * Whether a Kubernetes Service's clusters pass traffic through to the address the client dialled,
 * as the reference's `convertResolution` decides for a headless Service (`clusterIP: None`) on a
 * sidecar: a gateway has no original destination (EDS), and PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES
 * keeps EDS, for clients that reach every Service through the sidecar's HTTP proxy port.
 */
function isPassthroughHeadless(service: Service, proxy: Proxy, options: BuildSidecarClustersOptions): boolean {
  return service.clusterIp === 'None' && proxy.type !== 'router' && options.edsForHeadless !== true;
}

/** A proxy with IPv6 addresses only: its DNS clusters resolve AAAA records. */
export function isIpv6Only(proxy: Proxy): boolean {
  return proxy.ipAddresses.length > 0 && proxy.ipAddresses.every((address) => isIPv6(address));
}

/** Discovery type and load balancing from the DestinationRule's settings, as the reference maps them. */
function discoveryOf(name: string, lb: LoadBalancerSettings | undefined): { type: string; lb_policy: string; eds_cluster_config?: object } {
  const eds = { type: 'EDS', eds_cluster_config: { eds_config: ADS_CONFIG_SOURCE, service_name: name } };
  if (lb?.consistentHash) {
    return { ...eds, lb_policy: lb.consistentHash.maglev ? 'MAGLEV' : 'RING_HASH' };
  }
  switch (lb?.simple) {
    case 'ROUND_ROBIN':
      return { ...eds, lb_policy: 'ROUND_ROBIN' };
    case 'RANDOM':
      return { ...eds, lb_policy: 'RANDOM' };
    case 'PASSTHROUGH':
      // Straight to the address the caller dialled: no endpoints to discover.
      return { type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED' };
    default:
      // LEAST_CONN, LEAST_REQUEST, UNSPECIFIED and no rule: the reference's default.
      return { ...eds, lb_policy: 'LEAST_REQUEST' };
  }
}

function socketAddress(address: string, port: number): object {
  return { socket_address: { address, port_value: port } };
}
