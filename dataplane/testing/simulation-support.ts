/**
 * Test support: the config a proxy would receive, generated from a model by the daemon's
 * generators and round-tripped through the Envoy protos exactly as it travels, then compiled
 * into the data plane's decisions. Not exported from index.ts.
 */
import type { EnvoyProtos } from '../../xds/envoy/index.js';
import type { GenerateRequest, Generator } from '../../xds/index.js';
import type { Proxy } from '../../xds/index.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../xds/envoy/index.js';
import { keyResources, newConfigState, type ConfigSnapshot, type ConfigState } from '../config-state.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPushContext } from '../../xds/model/index.js';
import { loadCase } from '../../xds/generators/testing/test-cases.js';
import { newMeshGenerators } from '../../xds/mesh-generators.js';
import { newInboundSecurityFilters } from '../../xds/security/index.js';
import { routeNamesOf } from '../xds-subscriber.js';
import { generateRequest } from '../../xds/testing/generate-request.js';

const FULL: GenerateRequest = generateRequest({ names: [], full: true, configsUpdated: [] });

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
  const result = generator.generate(proxy, push, { ...FULL, names });
  return (result?.resources ?? []).map((named) => {
    const message = typeof named.resource === 'function' ? named.resource() : named.resource;
    return protos.decodeAny(protos.encodeAny(typeUrl, message));
  });
}

/**
 * The config a data plane subscribing as Envoy does receives, by type URL in subscription order:
 * CDS, EDS by the clusters' names, LDS, RDS by the listeners' names.
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

/** Applies generated config as the subscriber would, throwing when the data plane would NACK any of it. */
export function applyProxyConfig(state: ConfigState, config: ReadonlyMap<string, Record<string, unknown>[]>, version: string): void {
  for (const [typeUrl, resources] of config) {
    const result = state.apply(typeUrl, version, keyResources(typeUrl, resources));
    if (!result.ok) throw new Error(`the data plane rejects ${typeUrl}: ${result.error}`);
  }
}

/** What a data plane holds after subscribing as Envoy does. Throws when the data plane would NACK any of it. */
export function simulateProxyConfig<C>(protos: EnvoyProtos, generators: readonly Generator<C>[], proxy: Proxy, push: C): ConfigSnapshot {
  const state = newConfigState();
  applyProxyConfig(state, generateProxyConfig(protos, generators, proxy, push), 'simulated');
  return state.current();
}

/**
 * What a proxy holds for a generator case written as YAML (objects and one `ProxyNode`, as
 * xds/generators' cases): the file is written into `dir`, loaded, and the mesh's generators run
 * with each RequestAuthentication's inline `jwks` as its key set.
 */
export function simulateYaml(protos: EnvoyProtos, dir: string, name: string, yaml: string): ConfigSnapshot {
  writeFileSync(join(dir, `${name}.in.yaml`), yaml);
  const { model, proxy } = loadCase(dir, `${name}.in.yaml`);
  const generators = newMeshGenerators({ securityFilters: newInboundSecurityFilters({ jwks: { keySetFor: (rule) => rule.jwks ?? '{"keys":[]}' } }) });
  return simulateProxyConfig(protos, generators, proxy, buildPushContext(model));
}
