/**
 * Test support: the config a proxy would receive, generated from a model by the daemon's
 * generators and round-tripped through the Envoy protos exactly as it travels, then compiled
 * into the data plane's decisions. Not exported from index.ts.
 */
import type { EnvoyProtos } from '../../xds/envoy/index.js';
import type { GenerateRequest, Generator } from '../../xds/index.js';
import type { Proxy } from '../../xds/index.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../xds/envoy/index.js';
import { keyResources, newConfigState, type ConfigSnapshot } from '../config-state.js';
import { routeNamesOf } from '../xds-subscriber.js';

const FULL: GenerateRequest = { names: [], full: true, configsUpdated: [] };

function generate<C>(protos: EnvoyProtos, generators: readonly Generator<C>[], typeUrl: string, proxy: Proxy, push: C, names: readonly string[] = []): Record<string, unknown>[] {
  const generator = generators.find((candidate) => candidate.typeUrl === typeUrl);
  if (!generator) return [];
  const result = generator.generate(proxy, push, { ...FULL, names });
  return (result?.resources ?? []).map((named) => {
    const message = typeof named.resource === 'function' ? named.resource() : named.resource;
    return protos.decodeAny(protos.encodeAny(typeUrl, message));
  });
}

/**
 * What a data plane holds after subscribing as Envoy does (CDS, EDS by the clusters' names, LDS,
 * RDS by the listeners' names). Throws when the data plane would NACK any of it.
 */
export function simulateProxyConfig<C>(protos: EnvoyProtos, generators: readonly Generator<C>[], proxy: Proxy, push: C): ConfigSnapshot {
  const state = newConfigState();
  const apply = (typeUrl: string, resources: Record<string, unknown>[]): void => {
    const result = state.apply(typeUrl, 'simulated', keyResources(typeUrl, resources));
    if (!result.ok) throw new Error(`the data plane rejects ${typeUrl}: ${result.error}`);
  };
  const clusters = generate(protos, generators, CLUSTER_TYPE, proxy, push);
  apply(CLUSTER_TYPE, clusters);
  const edsNames = clusters
    .filter((cluster) => (cluster['type'] ?? 'EDS') === 'EDS')
    .map((cluster) => (cluster['eds_cluster_config'] as { service_name?: string } | undefined)?.service_name || (cluster['name'] as string));
  apply(ENDPOINT_TYPE, edsNames.length > 0 ? generate(protos, generators, ENDPOINT_TYPE, proxy, push, edsNames) : []);
  const listeners = generate(protos, generators, LISTENER_TYPE, proxy, push);
  apply(LISTENER_TYPE, listeners);
  const routes = routeNamesOf(listeners);
  apply(ROUTE_TYPE, routes.length > 0 ? generate(protos, generators, ROUTE_TYPE, proxy, push, routes) : []);
  return state.current();
}
