import type { V1Service } from '@kubernetes/client-node';
import type { Resource } from '../snapshot.js';

/**
 * A host as the daemon reads it in a resource of `namespace`: a short name (no dot) is a Service
 * of that namespace, `<name>.<namespace>.svc.<domainSuffix>`; anything with a dot is taken as written.
 */
export function fullHostName(host: string, namespace: string, domainSuffix: string): string {
  return host.includes('.') || host.includes('*') ? host : `${host}.${namespace}.svc.${domainSuffix}`;
}

/** Whether a host pattern (`*`, `*.example.com`, or an exact name) covers a concrete host. */
export function hostCovers(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*')) return host.endsWith(pattern.slice(1));
  return pattern === host;
}

/** Whether two host patterns can match the same request host. */
export function hostsOverlap(a: string, b: string): boolean {
  return hostCovers(a, b) || hostCovers(b, a);
}

/** The Services of the snapshot by their cluster name, `<name>.<namespace>.svc.<domainSuffix>`. */
export function servicesByHost(services: readonly Resource<V1Service>[], domainSuffix: string): Map<string, Resource<V1Service>> {
  return new Map(services.map((service) => [`${service.name}.${service.namespace}.svc.${domainSuffix}`, service]));
}

/** The namespaces a resource is visible in: every one (`*`), or a set. */
export type Visibility = { readonly all: true } | { readonly all: false; readonly namespaces: ReadonlySet<string> };

/** Reads `exportTo` (`*`, `.` for the resource's own namespace, or names), falling back to the mesh default. */
export function visibilityOf(exportTo: readonly string[] | undefined, defaults: readonly string[] | undefined, ownNamespace: string): Visibility {
  const entries = exportTo !== undefined && exportTo.length > 0 ? exportTo : defaults !== undefined && defaults.length > 0 ? defaults : ['*'];
  if (entries.includes('*')) return { all: true };
  return { all: false, namespaces: new Set(entries.map((entry) => (entry === '.' ? ownNamespace : entry))) };
}

export function isVisibleIn(visibility: Visibility, namespace: string): boolean {
  return visibility.all || visibility.namespaces.has(namespace);
}

/** Whether some namespace sees both resources. */
export function visibilitiesOverlap(a: Visibility, b: Visibility): boolean {
  if (a.all) return b.all || b.namespaces.size > 0;
  if (b.all) return a.namespaces.size > 0;
  return [...a.namespaces].some((namespace) => b.namespaces.has(namespace));
}

/** `namespace/name` of a gateway named in a VirtualService of `namespace`: `name`, `namespace/name` or the legacy `name.namespace`. */
export function gatewayKey(reference: string, namespace: string): string {
  if (reference.includes('/')) return reference;
  const [name = '', gatewayNamespace] = reference.split('.');
  return `${gatewayNamespace ?? namespace}/${name}`;
}

export const MESH_GATEWAY = 'mesh';
