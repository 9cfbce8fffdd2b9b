/**
 * The one way to name an object as a string key (for maps, work queues, logs and debug views):
 * `namespace/name`, and `Kind/namespace/name` when kinds share the key space. A cluster-scoped
 * object (empty namespace) is `name` and `Kind/name`. Names hold no `/`, so a key names one object.
 */

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** `namespace/name`, or `name` alone when the namespace is empty. */
export function formatObjectKey(key: NamespacedName): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

/** `Kind/namespace/name`, or `Kind/name` when the namespace is empty. */
export function formatConfigKey(key: NamespacedName & { readonly kind: string }): string {
  return `${key.kind}/${formatObjectKey(key)}`;
}
