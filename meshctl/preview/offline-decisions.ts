import type { MeshConfig } from '../../crds/index.js';
import { modelFromObjects, type RejectedObject } from '../../controllers/index.js';
import {
  compileProxyDecisions,
  type ClusterConfig,
  type ClusterLoadAssignmentConfig,
  type ListenerConfig,
  type ProxyDecisions,
  type ProxyResources,
  type RouteConfigurationConfig,
} from '../../dataplane/decisions/index.js';
import type { KubeObject } from '../../runtime/index.js';
import {
  buildPushContext,
  CLUSTER_TYPE,
  ENDPOINT_TYPE,
  generateProxyConfig,
  jsonToStruct,
  LISTENER_TYPE,
  loadEnvoyProtos,
  newInboundSecurityFilters,
  newMeshGenerators,
  parseProxy,
  ROUTE_TYPE,
  type EnvoyProtos,
  type JsonValue,
} from '../../xds/index.js';

/** A proxy as its bootstrap names it: node ID and metadata. */
export interface ProxyNodeFacts {
  readonly id: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** The decisions the daemon's generators would give a proxy of a mesh made of these objects. */
export interface OfflineMesh {
  configFor(node: ProxyNodeFacts): { resources: ProxyResources; decisions: ProxyDecisions };
  /** The objects the model did not take (invalid), so the caller can say so. */
  readonly rejected: readonly RejectedObject[];
}

export interface OfflineMeshOptions {
  readonly meshConfig: MeshConfig;
  /** The Envoy protos to round-trip through (loaded when absent). */
  readonly protos?: EnvoyProtos;
  readonly domain: string;
  readonly clusterId: string;
}

/** A key set with no keys: replays check recorded claims, never signatures. */
const NO_KEYS = '{"keys":[]}';

/**
 * The mesh's config generated offline: a model filled from the objects as the reconcilers fill it,
 * the daemon's own generators, and each proxy's config round-tripped through the Envoy protos and
 * compiled by the data plane's decision functions, as a proxy would hold it.
 */
export function newOfflineMesh(objects: readonly KubeObject[], options: OfflineMeshOptions): OfflineMesh {
  const { model, rejected } = modelFromObjects(objects, options);
  const push = buildPushContext(model);
  const generators = newMeshGenerators({ securityFilters: newInboundSecurityFilters({ jwks: { keySetFor: (rule) => rule.jwks ?? NO_KEYS } }) });
  const protos = options.protos ?? loadEnvoyProtos();
  return {
    rejected,
    configFor(node) {
      const proxy = parseProxy({ id: node.id, metadata: jsonToStruct(node.metadata as Record<string, JsonValue>) });
      const config = generateProxyConfig(protos, generators, proxy, push);
      const of = (typeUrl: string): Record<string, unknown>[] => config.get(typeUrl) ?? [];
      const byName = <T>(typeUrl: string, key: string): Map<string, T> => new Map(of(typeUrl).map((resource) => [String(resource[key] ?? ''), resource as T]));
      const resources: ProxyResources = {
        listeners: of(LISTENER_TYPE) as unknown as ListenerConfig[],
        routes: byName<RouteConfigurationConfig>(ROUTE_TYPE, 'name'),
        clusters: byName<ClusterConfig>(CLUSTER_TYPE, 'name'),
        endpoints: byName<ClusterLoadAssignmentConfig>(ENDPOINT_TYPE, 'cluster_name'),
      };
      return { resources, decisions: compileProxyDecisions(resources) };
    },
  };
}
