import { buildMeshConfig, MeshConfigError, meshConfigTextOf } from '../../crds/index.js';
import { MESH_CONFIG_MAP_NAME } from '../../names/index.js';
import type { MeshConfig } from '../../crds/index.js';
import type { MeshConfigWatcher } from '../sources/mesh-config-watcher.js';
import type { MeshModelWriter } from '../model/mesh-model.js';
import type { PushEmitter } from './push-emitter.js';
import { TerminalError } from '../../runtime/index.js';
import type { Clock, KubeObject, MeshMetrics, ObjectKey, Reconciler, Source } from '../../runtime/index.js';

export interface MeshConfigReconcilerOptions {
  /** Holds the mesh ConfigMap of the root namespace (other objects are ignored). */
  source: Source<KubeObject>;
  /** The revision's mesh ConfigMap; default `mesh`. */
  configMapName?: string;
  /** Holds the `SHARED_MESH_CONFIG` ConfigMap, when one is named. */
  sharedSource?: Source<KubeObject>;
  sharedName?: string;
  /** Where the ConfigMaps live (`--namespace`). */
  rootNamespace: string;
  /** The `--meshConfig` file. */
  watcher: MeshConfigWatcher;
  model: MeshModelWriter;
  push: PushEmitter;
  metrics: MeshMetrics<'pilot-discovery'>;
  clock: Clock;
}

/**
 * The mesh config: defaults, under the shared ConfigMap (`SHARED_MESH_CONFIG`), under the standard
 * config, which is the `mesh` key of the `mesh` ConfigMap when that exists, else the
 * `--meshConfig` file. Every input maps to one key, so the reconciler always rebuilds from all
 * of them. An invalid config is rejected (logged, counted as type `MeshConfig`) and the last good
 * one stays.
 */
export function newMeshConfigReconciler(options: MeshConfigReconcilerOptions): {
  key: ObjectKey;
  mapFn: (object: KubeObject) => ObjectKey | undefined;
  reconcile: Reconciler;
} {
  const { source, rootNamespace, watcher, model, push, clock } = options;
  const configMapName = options.configMapName ?? MESH_CONFIG_MAP_NAME;
  const key: ObjectKey = { namespace: rootNamespace, name: configMapName };
  const names = new Set([configMapName, ...(options.sharedName ? [options.sharedName] : [])]);
  const rejected = options.metrics.counter('pilot_total_rejected_configs');
  let lastRejected: string | undefined;

  const mapFn = (object: KubeObject): ObjectKey | undefined =>
    object.metadata?.namespace === rootNamespace && names.has(object.metadata?.name ?? '') ? key : undefined;

  const reconcile: Reconciler = async ({ log }) => {
    const startedAt = clock.now();
    const sharedText = options.sharedName
      ? meshConfigTextOf((options.sharedSource ?? source).store.get({ namespace: rootNamespace, name: options.sharedName }))
      : undefined;
    watcher.setSharedText(sharedText);
    const text = meshConfigTextOf(source.store.get(key));
    let config: MeshConfig;
    if (text === undefined) {
      config = watcher.current();
    } else {
      try {
        config = buildMeshConfig(text, `ConfigMap ${rootNamespace}/${configMapName}`, sharedText, `ConfigMap ${rootNamespace}/${options.sharedName}`);
      } catch (error) {
        if (!(error instanceof MeshConfigError)) throw error;
        const inputs = JSON.stringify([text, sharedText]);
        if (inputs === lastRejected) return;
        lastRejected = inputs;
        rejected.inc({ type: 'MeshConfig' });
        log.error({ origin: error.origin, error: error.message }, 'mesh config rejected, keeping the last good one');
        throw new TerminalError(error.message, { cause: error, issues: error.issues });
      }
    }
    lastRejected = undefined;
    if (!model.setMeshConfig(config)) return;
    push.push({ full: true, reason: 'mesh-config', configsUpdated: [{ kind: 'MeshConfig', ...key }], startedAt });
    log.info({ source: text === undefined ? 'file' : 'configmap' }, 'mesh config updated');
  };
  return { key, mapFn, reconcile };
}
