import type { ConfigKey } from '../model/config-key.js';
import { anyHeadless } from './headless-services.js';
import { endpointSliceFromObject } from '../model/registry-conversion.js';
import type { RegistryReconcilerOptions } from './namespace-reconciler.js';
import type { Reconciler } from '../../runtime/index.js';

/**
 * EndpointSlices into the registry (`PILOT_USE_ENDPOINT_SLICE`); endpoint changes push EDS only
 * (`full: false`), except a headless Service's, whose addresses are also DNS answers.
 */
export function newEndpointSliceReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  const events = options.metrics.counter('pilot_orch_reg_events');
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const slice = object ? endpointSliceFromObject(object) : undefined;
    const existed = model.registry.endpointSlice(key.namespace, key.name) !== undefined;
    const change = slice ? model.registry.applyEndpointSlice(slice) : model.registry.deleteEndpointSlice(key.namespace, key.name);
    if (!change.changed) return;
    events.inc({ type: 'EndpointSlice', event: !slice ? 'delete' : existed ? 'update' : 'add' });
    if (change.endpointsChanged.length === 0) return;
    const services = change.endpointsChanged.map((changed): ConfigKey => ({ kind: 'Service', ...changed }));
    push.push({ full: anyHeadless(model.registry, change.endpointsChanged), reason: 'endpoint', configsUpdated: services, startedAt });
    log.debug({ namespace: key.namespace, name: key.name, services: services.length }, 'endpoint slice updated');
  };
}
