import type { ConfigKey } from '../model/config-key.js';
import { anyHeadless } from './headless-services.js';
import { endpointSliceFromObject } from '../model/registry-conversion.js';
import type { RegistryReconcilerOptions } from './namespace-reconciler.js';
import type { Reconciler } from '../../runtime/index.js';
import type { EndpointSliceInfo } from '../model/registry-types.js';

/**
 * EndpointSlices into the registry (`PILOT_USE_ENDPOINT_SLICE`); endpoint changes push EDS only
 * (`full: false`), except a headless Service's, whose addresses are also DNS answers. An address
 * whose pod is not known yet counts in `pilot_orch_endpoints_with_no_pods` each time its slice is
 * read, and in `pilot_orch_endpoints_pending_pod` until the pod arrives (the pod reconciler keeps
 * that gauge too); a changed slice is an `eds` inbound update.
 */
export function newEndpointSliceReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  const events = options.metrics.counter('pilot_orch_reg_events');
  const withNoPods = options.metrics.counter('pilot_orch_endpoints_with_no_pods');
  const inboundUpdates = options.metrics.counter('pilot_inbound_updates');
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const slice = object ? endpointSliceFromObject(object) : undefined;
    const existed = model.registry.endpointSlice(key.namespace, key.name) !== undefined;
    const change = slice ? model.registry.applyEndpointSlice(slice) : model.registry.deleteEndpointSlice(key.namespace, key.name);
    const withoutPod = slice ? addressesWithoutPod(slice, (pod) => model.registry.workload(slice.namespace, pod) !== undefined) : 0;
    if (withoutPod > 0) withNoPods.inc(withoutPod);
    recordPendingPods(options);
    if (!change.changed) return;
    events.inc({ type: 'EndpointSlice', event: !slice ? 'delete' : existed ? 'update' : 'add' });
    inboundUpdates.inc({ type: 'eds' });
    if (change.endpointsChanged.length === 0) return;
    const services = change.endpointsChanged.map((changed): ConfigKey => ({ kind: 'Service', ...changed }));
    push.push({ full: anyHeadless(model.registry, change.endpointsChanged), reason: 'endpoint', configsUpdated: services, startedAt });
    log.debug({ namespace: key.namespace, name: key.name, services: services.length }, 'endpoint slice updated');
  };
}

/** The addresses of a slice's endpoints that name a pod the registry does not know. */
function addressesWithoutPod(slice: EndpointSliceInfo, isKnownPod: (name: string) => boolean): number {
  let count = 0;
  for (const endpoint of slice.endpoints) {
    if (endpoint.podName !== undefined && !isKnownPod(endpoint.podName)) count += endpoint.addresses.length;
  }
  return count;
}

/** `pilot_orch_endpoints_pending_pod`: the slices' addresses still waiting for their pod. */
export function recordPendingPods(options: Pick<RegistryReconcilerOptions, 'model' | 'metrics'>): void {
  options.metrics.gauge('pilot_orch_endpoints_pending_pod').set(options.model.registry.endpointsPendingPod());
}
