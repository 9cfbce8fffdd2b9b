/** The API group of an `apiVersion`: `networking.mesh.io/v1alpha3` → `networking.mesh.io`, `v1` → `` (core). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * A kind across versions, as a map key: `VirtualService.networking.mesh.io`, or `Namespace` for the
 * core group (the form `kubectl` prints).
 */
export function groupKindOf(apiVersion: string, kind: string): string {
  const group = groupOf(apiVersion);
  return group === '' ? kind : `${kind}.${group}`;
}
