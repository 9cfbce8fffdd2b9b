/** How a list-valued field merges in strategic merge patch and server-side apply. */
export type ListStrategy = { type: 'map'; keys: string[] } | { type: 'set' } | { type: 'atomic' };

/** Resolves the strategy of the list at a field path (names only, list indices left out). */
export type ListStrategyResolver = (fieldPath: readonly string[]) => ListStrategy;

const ATOMIC: ListStrategy = { type: 'atomic' };

/**
 * Merge keys of the built-in lists (a pod's containers and init containers, volumes, env and
 * image pull secrets by name, volume mounts by mount path, container ports by port and protocol)
 * that kubectl apply, server-side apply and the sidecar injector merge element by element (the
 * `patchMergeKey`/`listMapKeys` markers of the Kubernetes types). Others are atomic.
 */
export function builtinListStrategy(fieldPath: readonly string[]): ListStrategy {
  const last = fieldPath[fieldPath.length - 1];
  const parent = fieldPath[fieldPath.length - 2];
  switch (last) {
    case 'containers':
    case 'initContainers':
    case 'ephemeralContainers':
    case 'env':
    case 'volumes':
    case 'imagePullSecrets':
    case 'webhooks':
    case 'resourceClaims':
      return { type: 'map', keys: ['name'] };
    case 'secrets':
      return parent === undefined ? { type: 'map', keys: ['name'] } : ATOMIC;
    case 'volumeMounts':
      return { type: 'map', keys: ['mountPath'] };
    case 'volumeDevices':
      return { type: 'map', keys: ['devicePath'] };
    case 'hostAliases':
      return { type: 'map', keys: ['ip'] };
    case 'ownerReferences':
      return { type: 'map', keys: ['uid'] };
    case 'conditions':
      return { type: 'map', keys: ['type'] };
    case 'finalizers':
      return { type: 'set' };
    case 'topologySpreadConstraints':
      return { type: 'map', keys: ['topologyKey', 'whenUnsatisfiable'] };
    case 'ports':
      if (parent === 'containers' || parent === 'initContainers' || parent === 'ephemeralContainers') {
        return { type: 'map', keys: ['containerPort', 'protocol'] };
      }
      if (fieldPath.length === 2 && fieldPath[0] === 'spec') return { type: 'map', keys: ['port', 'protocol'] };
      return ATOMIC;
    default:
      return ATOMIC;
  }
}

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}

/** List strategies from a CRD's structural schema (`x-kubernetes-list-type`, `…-map-keys`). */
export function schemaListStrategy(schema: unknown): ListStrategyResolver {
  return (fieldPath) => {
    if (fieldPath[fieldPath.length - 1] === 'finalizers' && fieldPath.length === 2 && fieldPath[0] === 'metadata') {
      return { type: 'set' };
    }
    if (fieldPath[0] === 'metadata') return builtinListStrategy(fieldPath);
    let node = schema as SchemaNode | undefined;
    for (const name of fieldPath) {
      if (!node || typeof node !== 'object') return ATOMIC;
      if (node.type === 'array') node = node.items;
      if (!node) return ATOMIC;
      const next: SchemaNode | boolean | undefined =
        node.properties?.[name] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      node = typeof next === 'object' ? next : undefined;
    }
    if (!node) return ATOMIC;
    const listType = node['x-kubernetes-list-type'];
    const keys = node['x-kubernetes-list-map-keys'];
    if (listType === 'map' && keys && keys.length > 0) return { type: 'map', keys };
    if (listType === 'set') return { type: 'set' };
    return ATOMIC;
  };
}
