import type { Proxy } from '../../proxy.js';
import { BLACKHOLE_CLUSTER, parseClusterName } from '../../model/cluster-names.js';
import { gatewayKey, selectedGateways, type GatewaySelectionOptions } from './gateway-config.js';
import { virtualServicesForGateway } from './gateway-virtual-services.js';
import { resolveRuleHost, type PushContext } from '../../model/push-context.js';
import { buildSidecarClusters, type BuildSidecarClustersOptions, type ClusterResource } from '../sidecar/sidecar-clusters.js';

export interface BuildGatewayClustersOptions extends BuildSidecarClustersOptions, GatewaySelectionOptions {
  /** PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: only the clusters of hosts the bound VirtualServices route to. */
  readonly filterGatewayClusters?: boolean;
}

/** The hosts the VirtualServices bound to the proxy's Gateways send traffic to (routes, mirrors, tcp and tls routes), as FQDNs. */
export function gatewayDestinationHosts(proxy: Proxy, push: PushContext, options: GatewaySelectionOptions = {}): Set<string> {
  const hosts = new Set<string>();
  for (const gateway of selectedGateways(push, proxy, options)) {
    for (const bound of virtualServicesForGateway(push, proxy, gatewayKey(gateway))) {
      const add = (host: string): void => void hosts.add(resolveRuleHost(host, bound.namespace, push.domain));
      const spec = bound.virtualService.spec;
      for (const http of spec.http ?? []) {
        for (const destination of http.route ?? []) add(destination.destination.host);
        if (http.mirror) add(http.mirror.host);
        for (const mirror of http.mirrors ?? []) add(mirror.destination.host);
      }
      for (const route of [...(spec.tcp ?? []), ...(spec.tls ?? [])]) for (const destination of route.route ?? []) add(destination.destination.host);
    }
  }
  return hosts;
}

/**
 * The clusters of a gateway: the sidecar's outbound clusters (every service port and subset,
 * TLS per DestinationRule and auto mTLS) and BlackHoleCluster. A gateway has no inbound
 * clusters and, having no original-destination listener, no PassthroughCluster. With
 * `filterGatewayClusters`, only the hosts its VirtualServices route to.
 */
export function buildGatewayClusters(proxy: Proxy, push: PushContext, options: BuildGatewayClustersOptions = {}): ClusterResource[] {
  const clusters = buildSidecarClusters(proxy, push, options).filter(
    (cluster) => cluster.name === BLACKHOLE_CLUSTER || parseClusterName(cluster.name)?.direction === 'outbound',
  );
  if (!options.filterGatewayClusters) return clusters;
  const hosts = gatewayDestinationHosts(proxy, push, options);
  return clusters.filter((cluster) => cluster.name === BLACKHOLE_CLUSTER || hosts.has(parseClusterName(cluster.name)?.hostname ?? ''));
}
