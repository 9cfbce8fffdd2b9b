import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, routeNamesOf, type EnvoyProtos } from './envoy/index.js';
import type { GenerateRequest, Generator } from './generator.js';
import type { Proxy } from './proxy.js';

const OFFLINE_REASONS: GenerateRequest['reasons'] = new Map([['unknown', 1]]);

function generate<C>(
  protos: EnvoyProtos,
  generators: readonly Generator<C>[],
  typeUrl: string,
  proxy: Proxy,
  push: C,
  names: readonly string[] = [],
): Record<string, unknown>[] {
  const generator = generators.find((candidate) => candidate.typeUrl === typeUrl);
  if (!generator) return [];
  const result = generator.generate(proxy, push, { names, full: true, configsUpdated: [], reasons: OFFLINE_REASONS, startedAt: 0 });
  return (result?.resources ?? []).map((named) => {
    const message = typeof named.resource === 'function' ? named.resource() : named.resource;
    return protos.decodeAny(protos.encodeAny(typeUrl, message));
  });
}

/**
 * The config a proxy subscribing as Envoy does would receive from these generators, without a
 * stream: by type URL in subscription order (CDS, EDS by the clusters' names, LDS, RDS by the
 * listeners' route names), each resource round-tripped through the Envoy protos as it travels.
 */
export function generateProxyConfig<C>(
  protos: EnvoyProtos,
  generators: readonly Generator<C>[],
  proxy: Proxy,
  push: C,
): Map<string, Record<string, unknown>[]> {
  const clusters = generate(protos, generators, CLUSTER_TYPE, proxy, push);
  const edsNames = clusters
    .filter((cluster) => (cluster['type'] ?? 'EDS') === 'EDS')
    .map((cluster) => (cluster['eds_cluster_config'] as { service_name?: string } | undefined)?.service_name || (cluster['name'] as string));
  const listeners = generate(protos, generators, LISTENER_TYPE, proxy, push);
  const routes = routeNamesOf(listeners);
  return new Map([
    [CLUSTER_TYPE, clusters],
    [ENDPOINT_TYPE, edsNames.length > 0 ? generate(protos, generators, ENDPOINT_TYPE, proxy, push, edsNames) : []],
    [LISTENER_TYPE, listeners],
    [ROUTE_TYPE, routes.length > 0 ? generate(protos, generators, ROUTE_TYPE, proxy, push, routes) : []],
  ]);
}
