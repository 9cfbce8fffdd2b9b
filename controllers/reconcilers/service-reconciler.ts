import type { ConfigKey } from '../model/config-key.js';
import { serviceFromObject } from '../model/registry-conversion.js';
import type { RegistryReconcilerOptions } from './namespace-reconciler.js';
import type { Reconciler } from '../../runtime/index.js';

/**
 * Services into the registry (and their endpoints, recomputed); a change is a full push (reason
 * `service`) and an inbound update of type `svc` (`svcdelete` when the Service went).
 */
export function newServiceReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  const events = options.metrics.counter('pilot_orch_reg_events');
  const inboundUpdates = options.metrics.counter('pilot_inbound_updates');
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const service = object ? serviceFromObject(object, model.domain) : undefined;
    const existed = model.registry.service(key.namespace, key.name) !== undefined;
    const change = service ? model.registry.applyService(service) : model.registry.deleteService(key.namespace, key.name);
    if (!change.changed) return;
    events.inc({ type: 'Service', event: !service ? 'delete' : existed ? 'update' : 'add' });
    inboundUpdates.inc({ type: service ? 'svc' : 'svcdelete' });
    const own: ConfigKey = { kind: 'Service', namespace: key.namespace, name: key.name };
    const others = change.endpointsChanged
      .filter((changed) => changed.namespace !== key.namespace || changed.name !== key.name)
      .map((changed): ConfigKey => ({ kind: 'Service', ...changed }));
    push.push({ full: true, reason: 'service', configsUpdated: [own, ...others], startedAt });
    log.debug({ namespace: key.namespace, name: key.name, endpointsChanged: change.endpointsChanged.length > 0 }, 'service updated');
  };
}
