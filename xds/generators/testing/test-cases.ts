/** Test support for the generator golden cases (not exported from the package). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applyMeshConfig, parseMeshConfigInput, validateResource, type TypedResource } from '../../../crds/index.js';
import { newMeshModel, parseSecretCredential, serviceFromObject, workloadFromPod, type MeshModelWriter } from '../../../controllers/index.js';
import { loadSettings, type KubeObject } from '../../../runtime/index.js';
import type { MeshGeneratorSettings } from '../../mesh-generators.js';
import { meshGeneratorSettingsFromSettings } from '../../xds-settings.js';
import {
  CLUSTER_TYPE,
  ENDPOINT_TYPE,
  jsonToStruct,
  LISTENER_TYPE,
  parseProxy,
  ROUTE_TYPE,
  type EnvoyProtos,
  type GenerateRequest,
  type Generator,
  type JsonValue,
  type Proxy,
} from '../../index.js';
import type { PushContext } from '../../model/index.js';
import type { XdsSnapshot } from '../../testing/consistent.js';
import { generateRequest } from '../../testing/generate-request.js';

export const TEST_DOMAIN = 'cluster.local';
const CLUSTER_ID = 'cluster-a';

export interface GeneratorCase {
  model: MeshModelWriter;
  proxy: Proxy;
  /** The routes the `ProxyNode` document asks for (RDS cases). */
  routeNames: string[];
  /** The daemon's environment a `DaemonSettings` document gives (`env:`), when the case has one. */
  daemonEnv?: Record<string, string>;
}

/** The generator switches of the case's daemon settings, read through the settings registry; none without them. */
export function caseGeneratorOptions(loaded: Pick<GeneratorCase, 'daemonEnv'>): Partial<MeshGeneratorSettings> {
  return loaded.daemonEnv ? meshGeneratorSettingsFromSettings(loadSettings('pilot-discovery', loaded.daemonEnv)) : {};
}

/** Fills a model through its own writers, as the reconcilers do; the `ProxyNode` document names the proxy. */
export function loadCase(folder: string, file: string): GeneratorCase {
  return buildCase(
    parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((document) => document.toJS() as CaseObject),
    file,
  );
}

/**
 * A case document: a Kubernetes object, the `ProxyNode` naming the proxy, a `MeshConfig` (fields
 * under `spec`), or `DaemonSettings` (the daemon's environment under `env`).
 */
export type CaseObject = KubeObject & { id?: string; metadata?: Record<string, JsonValue>; routeNames?: string[]; env?: Record<string, string> };

/** `loadCase` over objects already parsed (`label` names them in errors). */
export function buildCase(objects: readonly CaseObject[], label: string): GeneratorCase {
  const model = newMeshModel({ domain: TEST_DOMAIN, clusterId: CLUSTER_ID, useEndpointSlices: false });
  let proxy: Proxy | undefined;
  let routeNames: string[] = [];
  let daemonEnv: Record<string, string> | undefined;
  for (const object of objects) {
    switch (object.kind) {
      case 'DaemonSettings':
        daemonEnv = { ...daemonEnv, ...object.env };
        break;
      case 'ProxyNode':
        proxy = parseProxy({ id: object.id ?? '', metadata: jsonToStruct((object.metadata ?? {}) as Record<string, JsonValue>) });
        routeNames = object.routeNames ?? [];
        break;
      case 'Service':
        model.registry.applyService(serviceFromObject(object, TEST_DOMAIN) ?? fail(`bad Service in ${label}`));
        break;
      case 'Pod':
        model.registry.applyWorkload(workloadFromPod(object, CLUSTER_ID) ?? fail(`bad Pod in ${label}`));
        break;
      case 'MeshConfig': {
        // The mesh config as written (its fields under `spec`), laid over the defaults.
        const parsed = parseMeshConfigInput(object['spec']);
        if (!parsed.success) fail(`bad MeshConfig in ${label}: ${JSON.stringify(parsed.error.issues)}`);
        model.setMeshConfig(applyMeshConfig(model.meshConfig(), parsed.data));
        break;
      }
      case 'Secret': {
        const parsed = parseSecretCredential(object as Parameters<typeof parseSecretCredential>[0]);
        if (parsed.kind !== 'credential') fail(`Secret ${object.metadata?.['name'] as string} in ${label} is not a credential: ${JSON.stringify(parsed)}`);
        model.credentials.apply(parsed.credential);
        break;
      }
      default: {
        const result = validateResource(object);
        if (result.errors.length > 0) fail(`invalid ${object.kind} in ${label}: ${JSON.stringify(result.errors)}`);
        model.configStore.apply(result.resource as TypedResource);
      }
    }
  }
  return { model, proxy: proxy ?? fail(`${label} has no ProxyNode`), routeNames, ...(daemonEnv ? { daemonEnv } : {}) };
}

function fail(message: string): never {
  throw new Error(message);
}

/** `value`, or a failure naming what was missing. */
export function required<T>(value: T | undefined, what: string): T {
  return value ?? fail(`missing ${what}`);
}

/** Every string value under `key` anywhere in a message (route names, cluster names), for consistency checks. */
export function valuesOf(value: unknown, key: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) valuesOf(item, key, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && typeof v === 'string') out.add(v);
      else valuesOf(v, key, out);
    }
  }
  return out;
}

export type Message = Record<string, unknown>;

/** The generators of one proxy type, by xDS type. */
export interface GeneratorSet {
  readonly lds: Generator<PushContext>;
  readonly rds: Generator<PushContext>;
  readonly cds: Generator<PushContext>;
  readonly eds: Generator<PushContext>;
}

export interface SnapshotRequest {
  /** Listeners asked for by name (proxyless gRPC); all of them otherwise. */
  readonly listenerNames?: readonly string[];
  /** Clusters asked for by the names the routes send to (proxyless gRPC); all of them otherwise. */
  readonly clustersFromRoutes?: boolean;
}

/**
 * Everything a proxy would fetch, asked for as a proxy asks: LDS, then RDS for the route names the
 * listeners reference, CDS, then EDS for the EDS clusters. Every resource passes the strict encoder
 * (an unknown field throws).
 */
export function generateSnapshot(
  proxy: Proxy,
  push: PushContext,
  generators: GeneratorSet,
  protos: EnvoyProtos,
  request: SnapshotRequest = {},
): Required<XdsSnapshot> & { listeners: Message[]; routes: Message[]; clusters: Message[]; endpoints: Message[] } {
  const fetch = (generator: Generator<PushContext>, typeUrl: string, names: readonly string[]): Message[] => {
    const ask: GenerateRequest = generateRequest({ names, full: true, configsUpdated: [] });
    return (generator.generate(proxy, push, ask)?.resources ?? []).map((named) => {
      const message = (typeof named.resource === 'function' ? named.resource() : named.resource) as Message;
      protos.encodeAny(typeUrl, message);
      return message;
    });
  };
  const listeners = fetch(generators.lds, LISTENER_TYPE, request.listenerNames ?? []);
  const routeNames = [...valuesOf(listeners, 'route_config_name')].sort();
  const routes = routeNames.length > 0 ? fetch(generators.rds, ROUTE_TYPE, routeNames) : [];
  const clusters = fetch(generators.cds, CLUSTER_TYPE, request.clustersFromRoutes ? [...valuesOf(routes, 'cluster')] : []);
  const edsNames = clusters.filter((cluster) => cluster['type'] === 'EDS').map(edsServiceName);
  const endpoints = edsNames.length > 0 ? fetch(generators.eds, ENDPOINT_TYPE, edsNames) : [];
  return { listeners, routes, clusters, endpoints };
}

function edsServiceName(cluster: Message): string {
  const config = cluster['eds_cluster_config'] as { service_name?: string } | undefined;
  return config?.service_name || String(cluster['name']);
}
