import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../xds/envoy/index.js';
import {
  compileProxyDecisions,
  ConfigRejection,
  type ClusterConfig,
  type ClusterLoadAssignmentConfig,
  type ListenerConfig,
  type ProxyDecisions,
  type ProxyResources,
  type RouteConfigurationConfig,
} from './decisions/index.js';
import { errorMessage } from '../runtime/index.js';

export type ResourceMap = ReadonlyMap<string, Record<string, unknown>>;

/** What became of an update: accepted (ACK) or rejected with the reason (NACK). */
export type ApplyResult = { readonly ok: true } | { readonly ok: false; readonly error: string };

export interface ConfigSnapshot {
  readonly resources: ProxyResources;
  readonly decisions: ProxyDecisions;
  /** Accepted version per type URL. */
  readonly versions: ReadonlyMap<string, string>;
}

export interface ConfigState {
  /** The last good snapshot (an empty one before any update). */
  current(): ConfigSnapshot;
  /**
   * Replaces (CDS, LDS) or merges into (EDS, RDS: answers name only what changed; every type of a
   * delta stream) the resources of one type, drops the `removed` names, and compiles the whole;
   * a rejection leaves the last good snapshot serving.
   */
  apply(typeUrl: string, version: string, resources: ResourceMap, options?: { replace?: boolean; removed?: readonly string[] }): ApplyResult;
  /** Records the rejection of an update refused before it could be compiled (a resource that does not decode). */
  reject(typeUrl: string, error: string): void;
  /** Called after every accepted update. */
  onChange(listener: (snapshot: ConfigSnapshot) => void): void;
  /** The last rejection per type (for the admin API and readiness). */
  rejections(): ReadonlyMap<string, string>;
}

function nameOf(typeUrl: string, resource: Record<string, unknown>): string {
  const key = typeUrl === ENDPOINT_TYPE ? 'cluster_name' : 'name';
  const name = resource[key];
  if (typeof name !== 'string' || name === '') throw new ConfigRejection(typeUrl.slice(typeUrl.lastIndexOf('.') + 1), key, 'is required');
  return name;
}

/** Keys resources by their own names, refusing duplicates. */
export function keyResources(typeUrl: string, resources: readonly Record<string, unknown>[]): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const resource of resources) {
    const name = nameOf(typeUrl, resource);
    if (out.has(name)) throw new ConfigRejection(name, 'name', 'appears twice in one response');
    out.set(name, resource);
  }
  return out;
}

function toResources(maps: ReadonlyMap<string, ResourceMap>): ProxyResources {
  const of = (typeUrl: string): ResourceMap => maps.get(typeUrl) ?? new Map();
  return {
    listeners: [...of(LISTENER_TYPE).values()] as unknown as ListenerConfig[],
    routes: of(ROUTE_TYPE) as unknown as ReadonlyMap<string, RouteConfigurationConfig>,
    clusters: of(CLUSTER_TYPE) as unknown as ReadonlyMap<string, ClusterConfig>,
    endpoints: of(ENDPOINT_TYPE) as unknown as ReadonlyMap<string, ClusterLoadAssignmentConfig>,
  };
}

export function newConfigState(): ConfigState {
  let maps = new Map<string, ResourceMap>();
  const empty = toResources(maps);
  let snapshot: ConfigSnapshot = { resources: empty, decisions: compileProxyDecisions(empty), versions: new Map() };
  const listeners: ((snapshot: ConfigSnapshot) => void)[] = [];
  const rejected = new Map<string, string>();
  return {
    current: () => snapshot,
    apply(typeUrl, version, resources, options = {}) {
      const replace = options.replace ?? (typeUrl === CLUSTER_TYPE || typeUrl === LISTENER_TYPE);
      const held = maps.get(typeUrl);
      if (!replace && resources.size === 0 && !(options.removed ?? []).some((name) => held?.has(name))) {
        // Nothing added, updated or removed (a delta response after a reconnect, say): the compiled config stands.
        rejected.delete(typeUrl);
        snapshot = { ...snapshot, versions: new Map(snapshot.versions).set(typeUrl, version) };
        for (const listener of listeners) listener(snapshot);
        return { ok: true };
      }
      const merged = replace ? new Map(resources) : new Map([...(maps.get(typeUrl) ?? new Map()), ...resources]);
      for (const name of options.removed ?? []) merged.delete(name);
      const candidateMaps = new Map(maps).set(typeUrl, merged);
      const candidate = toResources(candidateMaps);
      let decisions: ProxyDecisions;
      try {
        decisions = compileProxyDecisions(candidate);
      } catch (error) {
        const message = errorMessage(error);
        rejected.set(typeUrl, message);
        return { ok: false, error: message };
      }
      rejected.delete(typeUrl);
      maps = candidateMaps;
      snapshot = { resources: candidate, decisions, versions: new Map(snapshot.versions).set(typeUrl, version) };
      for (const listener of listeners) listener(snapshot);
      return { ok: true };
    },
    reject: (typeUrl, error) => void rejected.set(typeUrl, error),
    onChange: (listener) => void listeners.push(listener),
    rejections: () => rejected,
  };
}
