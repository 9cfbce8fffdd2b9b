import type { ConfigKey } from '../model/config-key.js';
import { anyHeadless } from './headless-services.js';
import { workloadFromPod } from '../model/registry-conversion.js';
import type { RegistryReconcilerOptions } from './namespace-reconciler.js';
import type { Reconciler } from '../../runtime/index.js';
import { recordPendingPods } from './endpoint-slice-reconciler.js';

/**
 * Pods into the registry as workloads (carrying `--clusterID`). A change to the address,
 * readiness or sidecar of a pod only moves endpoints: `full: false`, reason `endpoint`, naming
 * the Services whose endpoints changed. A change to what the pod is (labels, service account,
 * node) changes which policies and services apply to its proxy: a full push, reason `proxy`.
 * Moved endpoints are an `eds` inbound update, as the reference's EDS update from the registry.
 */
export function newPodReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  const events = options.metrics.counter('pilot_orch_reg_events');
  const inboundUpdates = options.metrics.counter('pilot_inbound_updates');
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const workload = object ? workloadFromPod(object, model.clusterId) : undefined;
    const existed = model.registry.workload(key.namespace, key.name) !== undefined;
    const change = workload ? model.registry.applyWorkload(workload) : model.registry.deleteWorkload(key.namespace, key.name);
    if (!change.changed) return;
    // A pod that arrives after the slices naming it ends their wait.
    recordPendingPods(options);
    events.inc({ type: 'Pod', event: !workload ? 'delete' : existed ? 'update' : 'add' });
    const pod: ConfigKey = { kind: 'Pod', namespace: key.namespace, name: key.name };
    const services = change.endpointsChanged.map((changed): ConfigKey => ({ kind: 'Service', ...changed }));
    if (change.endpointsChanged.length > 0) inboundUpdates.inc({ type: 'eds' });
    if (change.identityChanged) {
      push.push({ full: true, reason: 'proxy', configsUpdated: [pod, ...services], startedAt });
    } else {
      push.push({ full: anyHeadless(model.registry, change.endpointsChanged), reason: 'endpoint', configsUpdated: [...services, pod], startedAt });
    }
    log.debug({ namespace: key.namespace, name: key.name, services: services.length, identityChanged: change.identityChanged }, 'workload updated');
  };
}
