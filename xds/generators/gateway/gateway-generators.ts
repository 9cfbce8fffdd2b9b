import type { Generator } from '../../generator.js';
import type { Proxy } from '../../proxy.js';
import { CLUSTER_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../envoy/type-urls.js';
import { memoOf } from '../../encoding/index.js';
import { parseClusterName } from '../../model/cluster-names.js';
import { destinationRuleKey } from '../../model/destination-rule-policy.js';
import { buildGatewayClusters, type BuildGatewayClustersOptions } from './gateway-clusters.js';
import { gatewayLabelsOf, labelsKey, mergeGateways, serversKey, type GatewaySelectionOptions } from './gateway-config.js';
import { buildGatewayListenerSpecs, type BuildGatewayListenersOptions } from './gateway-listeners.js';
import { buildGatewayRouteConfiguration, type BuildGatewayRoutesOptions } from './gateway-routes.js';
import { workloadOfProxy } from '../proxy-workload.js';
import { accessLogOf, withAccessLog } from '../access-log.js';
import { acceptsHttp10, withHttp10 } from '../http10.js';
import { withDelayedClose } from '../delayed-close.js';
import type { PushContext } from '../../model/push-context.js';

/** What a gateway's output depends on besides the push context and its servers: its namespace and labels (policies, exportTo, source matches). */
function proxyKey(push: PushContext, proxy: Proxy): string {
  return `${proxy.configNamespace}@${workloadOfProxy(push, proxy)?.namespace ?? ''}@${labelsKey(gatewayLabelsOf(push, proxy))}@${labelsKey(proxy.metadata.labels)}`;
}

/**
 * LDS for gateways: every listener each full push; endpoint-only pushes leave it alone. A
 * listener's encoded bytes are shared by the gateway proxies with the same servers on that
 * port, namespace and labels.
 */
export function newGatewayLdsGenerator(options: BuildGatewayListenersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const key = proxyKey(push, proxy);
      const topology = JSON.stringify(proxy.metadata.raw['PROXY_CONFIG'] ?? null);
      const http10 = acceptsHttp10(proxy, options);
      return {
        resources: buildGatewayListenerSpecs(proxy, push, options).map(({ spec, listener }) => ({
          name: listener.name,
          resource: withDelayedClose(withHttp10(withAccessLog(listener, accessLogOf(push, memoOf(request))), http10), options),
          cacheKey: `${listener.name}@${serversKey(spec.servers)}@${key}@${topology}${http10 ? '@http10' : ''}`,
        })),
      };
    },
  };
}

export interface GatewayRdsOptions extends GatewaySelectionOptions, BuildGatewayRoutesOptions {}

/**
 * RDS for gateways: the requested route configurations (`http.<port>`, `https.<port>.<name>.<gateway>.<ns>`;
 * RDS is not a wildcard type, so a request naming nothing gets nothing). A name no server has
 * any more gets an empty configuration, as Envoy may still ask while a listener drains.
 */
export function newGatewayRdsGenerator(options: GatewayRdsOptions = {}): Generator<PushContext> {
  return {
    typeUrl: ROUTE_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const names = request.delta?.subscribed ?? request.names;
      if (names.length === 0) return { resources: [] };
      const merged = mergeGateways(push, proxy, options);
      const key = proxyKey(push, proxy);
      return {
        resources: [...new Set(names)].sort().map((name) => {
          const servers = merged.serversByRouteName.get(name) ?? [];
          return {
            name,
            cacheKey: `${name}@${serversKey(servers)}@${key}`,
            resource: () => buildGatewayRouteConfiguration(proxy, push, name, servers, options),
          };
        }),
      };
    },
  };
}

/**
 * CDS for gateways: the outbound clusters (the sidecar's, shared through the same cache keys)
 * and BlackHoleCluster; no inbound or passthrough clusters.
 */
export function newGatewayCdsGenerator(options: BuildGatewayClustersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: CLUSTER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      return {
        resources: buildGatewayClusters(proxy, push, options).map((cluster) => ({
          name: cluster.name,
          resource: cluster,
          cacheKey: `${cluster.name}@${destinationRuleKey(push, proxy, parseClusterName(cluster.name)?.hostname ?? '')}`,
        })),
      };
    },
  };
}
