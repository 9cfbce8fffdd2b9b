import type { Service } from '../../controllers/index.js';
import type { PushContext } from './push-context.js';

/**
 * Whether a proxy of `namespace` sees a service: a ServiceEntry's `exportTo` (else the mesh
 * config's `defaultServiceExportTo`): `*` every namespace, `.` the entry's own, `~` none, or
 * namespace names. Kubernetes Services are seen everywhere.
 */
export function isServiceVisible(push: PushContext, service: Service, namespace: string): boolean {
  if (!service.entry) return true;
  const declared = service.entry.exportTo.length > 0 ? service.entry.exportTo : (push.meshConfig.defaultServiceExportTo ?? ['*']);
  return declared.some((to) => to === '*' || to === namespace || (to === '.' && service.namespace === namespace));
}

// Keyed by the immutable push context, as the endpoint TLS decisions are: every generator of one
// push asks the same question for the same namespaces.
const byPush = new WeakMap<PushContext, { restricted: boolean; byNamespace: Map<string, readonly Service[]> }>();

/**
 * The services a proxy of `namespace` sees, sorted by hostname. When every service is seen
 * everywhere, `push.services` itself: callers may then share what they build across namespaces
 * (see `serviceVisibilityScope`).
 */
export function visibleServices(push: PushContext, namespace: string): readonly Service[] {
  const known = visibilityOf(push);
  if (!known.restricted) return push.services;
  let list = known.byNamespace.get(namespace);
  if (!list) known.byNamespace.set(namespace, (list = Object.freeze(push.services.filter((service) => isServiceVisible(push, service, namespace)))));
  return list;
}

/** What a list built from the visible services depends on: nothing (`*`) when all are seen everywhere, else the namespace. */
export function serviceVisibilityScope(push: PushContext, namespace: string): string {
  return visibilityOf(push).restricted ? namespace : '*';
}

function visibilityOf(push: PushContext): { restricted: boolean; byNamespace: Map<string, readonly Service[]> } {
  let known = byPush.get(push);
  if (!known) {
    const defaults = push.meshConfig.defaultServiceExportTo ?? ['*'];
    const restricted = push.services.some((service) => service.entry && !(service.entry.exportTo.length > 0 ? service.entry.exportTo : defaults).includes('*'));
    byPush.set(push, (known = { restricted, byNamespace: new Map() }));
  }
  return known;
}
