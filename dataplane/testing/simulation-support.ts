/**
 * Test support: the config a proxy would receive, generated from a model by the daemon's
 * generators and round-tripped through the Envoy protos exactly as it travels, then compiled
 * into the data plane's decisions. Not exported from index.ts.
 */
import type { EnvoyProtos } from '../../xds/envoy/index.js';
import { generateProxyConfig, type Generator } from '../../xds/index.js';

export { generateProxyConfig };
import type { Proxy } from '../../xds/index.js';
import { keyResources, newConfigState, type ConfigSnapshot, type ConfigState } from '../config-state.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPushContext } from '../../xds/model/index.js';
import { loadCase } from '../../xds/generators/testing/test-cases.js';
import { newMeshGenerators } from '../../xds/mesh-generators.js';
import { newInboundSecurityFilters } from '../../xds/security/index.js';

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
