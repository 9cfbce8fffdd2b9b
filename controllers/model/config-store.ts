import type { KindName, ResourceOf, TypedResource } from '../../crds/index.js';
import { stableJson } from '../stable-json.js';

/** One stored policy: the last good version of its object. Never mutated: a write replaces it. */
export interface ConfigEntry<K extends KindName = KindName> {
  readonly kind: K;
  readonly namespace: string;
  readonly name: string;
  readonly resource: ResourceOf<K>;
  /** The object's `metadata.resourceVersion` when it was accepted (empty when it had none). */
  readonly resourceVersion: string;
  /** The object's `metadata.generation` (empty when it had none, as in the config folder). */
  readonly generation: string;
  /** The store version this entry was written at. */
  readonly version: number;
}

/** The read side of the config store, for the push pipeline and debug endpoints. */
export interface ConfigStore {
  get<K extends KindName>(kind: K, namespace: string, name: string): ConfigEntry<K> | undefined;
  /** Sorted by namespace, then name; one namespace only when given. */
  list<K extends KindName>(kind: K, namespace?: string): readonly ConfigEntry<K>[];
  /** Grows by one with every change to any entry; unchanged content leaves it alone. */
  version(): number;
}

/** The write side, held by the reconcilers only. */
export interface ConfigStoreWriter extends ConfigStore {
  /** Stores a validated resource; false (and nothing written) when the stored one has the same content. */
  apply(resource: TypedResource): boolean;
  /** False when nothing was stored under the key. */
  delete(kind: KindName, namespace: string, name: string): boolean;
}

/**
 * What makes two versions of a policy different for the model: its labels, annotations and spec,
 * and the status of its Healthy condition (a WorkloadEntry's health decides its endpoints'
 * readiness); the rest of the status, resource versions and server bookkeeping are not config.
 */
export function configContentOf(object: { metadata?: { labels?: unknown; annotations?: unknown }; spec?: unknown; status?: unknown }): string {
  const healthy = healthyStatusOf(object.status);
  return stableJson({
    labels: object.metadata?.labels ?? {},
    annotations: object.metadata?.annotations ?? {},
    spec: object.spec ?? null,
    ...(healthy !== undefined ? { healthy } : {}),
  });
}

function healthyStatusOf(status: unknown): unknown {
  const conditions = typeof status === 'object' && status !== null ? (status as { conditions?: unknown }).conditions : undefined;
  if (!Array.isArray(conditions)) return undefined;
  const healthy: unknown = conditions.find((condition: unknown) => (condition as { type?: unknown } | null)?.type === 'Healthy');
  return (healthy as { status?: unknown } | undefined)?.status;
}

interface Stored {
  entry: ConfigEntry;
  /** Computed when a second version arrives: most objects are written once. */
  content?: string;
}

type ByName = Map<string, Stored>;

export function newConfigStore(): ConfigStoreWriter {
  const kinds = new Map<KindName, Map<string, ByName>>();
  /** Sorted lists, per kind and per `kind/namespace`, dropped when the kind changes. */
  const sorted = new Map<string, readonly ConfigEntry[]>();
  let version = 0;

  const namespacesOf = (kind: KindName): Map<string, ByName> => {
    let namespaces = kinds.get(kind);
    if (!namespaces) kinds.set(kind, (namespaces = new Map()));
    return namespaces;
  };

  const invalidate = (kind: KindName): void => {
    for (const cacheKey of [...sorted.keys()]) {
      if (cacheKey === kind || cacheKey.startsWith(`${kind}/`)) sorted.delete(cacheKey);
    }
  };

  const sortedEntries = (byName: ByName): ConfigEntry[] => [...byName.keys()].sort().map((name) => (byName.get(name) as Stored).entry);

  return {
    get<K extends KindName>(kind: K, namespace: string, name: string): ConfigEntry<K> | undefined {
      return kinds.get(kind)?.get(namespace)?.get(name)?.entry as ConfigEntry<K> | undefined;
    },

    list<K extends KindName>(kind: K, namespace?: string): readonly ConfigEntry<K>[] {
      const cacheKey = namespace === undefined ? kind : `${kind}/${namespace}`;
      let list = sorted.get(cacheKey);
      if (!list) {
        const namespaces = kinds.get(kind);
        if (namespace !== undefined) {
          const byName = namespaces?.get(namespace);
          list = byName ? sortedEntries(byName) : [];
        } else {
          list = [...(namespaces?.keys() ?? [])].sort().flatMap((ns) => sortedEntries(namespaces?.get(ns) as ByName));
        }
        sorted.set(cacheKey, list);
      }
      return list as readonly ConfigEntry<K>[];
    },

    version: () => version,

    apply(resource) {
      const kind = resource.kind;
      const namespace = resource.metadata.namespace ?? '';
      const name = resource.metadata.name;
      const namespaces = namespacesOf(kind);
      let byName = namespaces.get(namespace);
      const previous = byName?.get(name);
      let content: string | undefined;
      if (previous) {
        previous.content ??= configContentOf(previous.entry.resource);
        content = configContentOf(resource);
        if (previous.content === content) return false;
      }
      if (!byName) namespaces.set(namespace, (byName = new Map()));
      const entry: ConfigEntry = {
        kind,
        namespace,
        name,
        resource,
        resourceVersion: resource.metadata.resourceVersion ?? '',
        generation: String((resource.metadata as { generation?: number }).generation ?? ''),
        version: ++version,
      };
      byName.set(name, content === undefined ? { entry } : { entry, content });
      invalidate(kind);
      return true;
    },

    delete(kind, namespace, name) {
      const namespaces = kinds.get(kind);
      const byName = namespaces?.get(namespace);
      if (!byName?.delete(name)) return false;
      if (byName.size === 0) namespaces?.delete(namespace);
      version++;
      invalidate(kind);
      return true;
    },
  };
}
