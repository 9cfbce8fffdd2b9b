import type { ServiceRegistry } from '../model/service-registry.js';

/**
 * Whether any of these Services is headless (`clusterIP: None`): its endpoint addresses are also
 * its DNS answers, so an endpoint change needs the name table (a full-push type) pushed too.
 */
export function anyHeadless(registry: ServiceRegistry, services: readonly { readonly namespace: string; readonly name: string }[]): boolean {
  return services.some((service) => registry.service(service.namespace, service.name)?.clusterIp === 'None');
}
