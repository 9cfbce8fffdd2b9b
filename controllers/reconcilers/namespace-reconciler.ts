import { namespaceFromObject } from '../model/registry-conversion.js';
import type { MeshModelWriter } from '../model/mesh-model.js';
import type { PushEmitter } from './push-emitter.js';
import type { Clock, KubeObject, MeshMetrics, Reconciler, Source } from '../../runtime/index.js';

export interface RegistryReconcilerOptions {
  source: Source<KubeObject>;
  model: MeshModelWriter;
  push: PushEmitter;
  metrics: MeshMetrics<'pilot-discovery'>;
  clock: Clock;
}

/** Namespaces and their labels into the registry; a change is a full push (reason `namespace`). */
export function newNamespaceReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  const events = options.metrics.counter('pilot_orch_reg_events');
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const info = object ? namespaceFromObject(object) : undefined;
    const existed = model.registry.namespace(key.name) !== undefined;
    const changed = info ? model.registry.applyNamespace(info) : model.registry.deleteNamespace(key.name);
    if (!changed) return;
    events.inc({ type: 'Namespace', event: !info ? 'delete' : existed ? 'update' : 'add' });
    push.push({ full: true, reason: 'namespace', configsUpdated: [{ kind: 'Namespace', namespace: '', name: key.name }], startedAt });
    log.debug({ namespace: key.name }, 'namespace updated');
  };
}
