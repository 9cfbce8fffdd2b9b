import { SECRET_TYPE } from './envoy/type-urls.js';
import type { Generator } from './generator.js';
import { newMeshClientTlsHook } from './security/client-tls.js';
import type { Proxy } from './proxy.js';
import {
  newGatewayCdsGenerator,
  newGatewayLdsGenerator,
  newGrpcGenerators,
  newGatewayRdsGenerator,
  newGatewaySecretGenerator,
  newSidecarCdsGenerator,
  newSidecarEdsGenerator,
  newSidecarLdsGenerator,
  newSidecarRdsGenerator,
  newNameTableGenerator,
  type BuildGatewayClustersOptions,
  type BuildGatewayListenersOptions,
  type BuildSidecarClustersOptions,
  type GatewayRdsOptions,
  type GatewaySecretGeneratorOptions,
  type BuildSidecarListenersOptions,
  type VirtualServiceRouteOptions,
} from './generators/index.js';
import { type PushContext } from './model/index.js';

/** What kind of client a proxy is, as the generators care: Envoy sidecar, Envoy gateway, proxyless gRPC. */
export type ProxyKind = 'sidecar' | 'router' | 'grpc';

export function proxyKindOf(proxy: Proxy): ProxyKind {
  if (proxy.metadata.generator === 'grpc') return 'grpc';
  return proxy.type === 'router' ? 'router' : 'sidecar';
}

export interface MeshGeneratorsOptions
  extends
    BuildSidecarClustersOptions,
    BuildSidecarListenersOptions,
    BuildGatewayListenersOptions,
    BuildGatewayClustersOptions,
    GatewayRdsOptions,
    GatewaySecretGeneratorOptions,
    VirtualServiceRouteOptions {}

/** The generators' switches that the settings registry sets (`xds-settings.ts` maps them). */
export type MeshGeneratorSettings = Required<
  Pick<
    MeshGeneratorsOptions,
    | 'skipValidateTrustDomain'
    | 'scopeToNamespace'
    | 'useTargetPortForRoutes'
    | 'filterGatewayClusters'
    | 'collapseRoutes'
    | 'stripHostPort'
    | 'defaultRequestTimeoutMs'
    | 'acceptHttp10'
    | 'edsForHeadless'
    | 'headlessPodListeners'
    | 'sidecarUseRemoteAddress'
    | 'inboundPassthrough'
    | 'delayedCloseTimeoutMs'
  >
>;

/**
 * One generator per type URL that hands each proxy to the generator of its kind; a kind without
 * a generator for a type gets nothing of that type.
 */
export function byProxyKind(kinds: Readonly<Record<ProxyKind, readonly Generator<PushContext>[]>>): Generator<PushContext>[] {
  const typeUrls = new Set(Object.values(kinds).flatMap((generators) => generators.map((generator) => generator.typeUrl)));
  return [...typeUrls].map((typeUrl) => {
    const forKind = Object.fromEntries(
      (Object.keys(kinds) as ProxyKind[]).map((kind) => [kind, kinds[kind].find((generator) => generator.typeUrl === typeUrl)]),
    ) as Record<ProxyKind, Generator<PushContext> | undefined>;
    return {
      typeUrl,
      generate: (proxy, push, request) => forKind[proxyKindOf(proxy)]?.generate(proxy, push, request),
    };
  });
}

/** A generator that leaves pushes alone when only Secrets changed (only the Secret generator reads them). */
function ignoringSecretOnlyPushes(generator: Generator<PushContext>): Generator<PushContext> {
  if (generator.typeUrl === SECRET_TYPE) return generator;
  return {
    typeUrl: generator.typeUrl,
    generate: (proxy, push, request) =>
      request.configsUpdated.length > 0 && request.configsUpdated.every((key) => key.kind === 'Secret') ? undefined : generator.generate(proxy, push, request),
  };
}

/**
 * The generators the daemon serves, for every kind of proxy; client mutual TLS per
 * DestinationRules and auto mTLS unless told otherwise. Secrets (`credentialName`) go to
 * gateways only: a sidecar's request for one is refused.
 */
export function newMeshGenerators(options: MeshGeneratorsOptions = {}): Generator<PushContext>[] {
  const withTls = { ...options, clusterTransportSocket: options.clusterTransportSocket ?? newMeshClientTlsHook() };
  const routes = options.defaultRequestTimeoutMs !== undefined ? { defaultRequestTimeoutMs: options.defaultRequestTimeoutMs } : {};
  const secrets = newGatewaySecretGenerator(options.onRefused ? { onRefused: options.onRefused } : {});
  const names = newNameTableGenerator();
  const eds = newSidecarEdsGenerator(options.edsForHeadless !== undefined ? { edsForHeadless: options.edsForHeadless } : {});
  const sidecar = [newSidecarCdsGenerator(withTls), eds, newSidecarLdsGenerator(withTls), newSidecarRdsGenerator(routes), secrets, names];
  const router = [newGatewayCdsGenerator(withTls), eds, newGatewayLdsGenerator(options), newGatewayRdsGenerator(options), secrets, names];
  return byProxyKind({ sidecar, router, grpc: newGrpcGenerators(routes) }).map(ignoringSecretOnlyPushes);
}
