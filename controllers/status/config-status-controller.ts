import type { KubeConfig } from '@kubernetes/client-node';
import { KINDS, type KindName } from '../../crds/index.js';
import { buildConfigStatus, type ConfigOutcome, type ConfigStatusOptions, type ValidationMessage } from './config-status.js';
import type { KubeThrottle } from '../sources/kube-throttle.js';
import { formatObjectKey } from '../../names/index.js';
import { controllerFor } from '../../runtime/index.js';
import type { Clock, Controller, KubeObject, Logger, Manager, ObjectKey, Source, SyncErrorCounter } from '../../runtime/index.js';

/** Where the config reconciler leaves its verdicts for the status writer. */
export interface ConfigOutcomeSink {
  record(key: ObjectKey, outcome: ConfigOutcome): void;
  forget(key: ObjectKey): void;
}

/** Where the daemon's analysis leaves the messages about one object (an empty list clears them). */
export interface AnalysisMessageSink {
  analysisMessages(key: ObjectKey, messages: readonly ValidationMessage[]): void;
}

export interface ConfigStatusControllerOptions {
  manager: Manager;
  kind: KindName;
  /** The same source the config reconciler of the kind watches. */
  source: Source<KubeObject>;
  kubeConfig: KubeConfig;
  /** Each status write waits on every one of these (`PILOT_STATUS_QPS`/`BURST`, then `--orchApiQPS`/`Burst`). */
  throttles: readonly KubeThrottle[];
  status: ConfigStatusOptions;
  workers: number;
  log: Logger;
  clock: Clock;
  syncErrors?: { counter: SyncErrorCounter; labels: Record<string, string> };
}

/**
 * Writes the config reconciler's verdicts back onto the objects (`/status`, JSON merge patch).
 * Leader-elected, as the reference's status writers: replicas would fight over it otherwise. A
 * write happens only when the object does not already carry the status, so the watch event the
 * write causes comes back here and ends.
 */
export function newConfigStatusController(options: ConfigStatusControllerOptions): { controller: Controller; sink: ConfigOutcomeSink & AnalysisMessageSink } {
  const { kind, source, clock, log } = options;
  const info = KINDS[kind];
  const outcomes = new Map<string, ConfigOutcome>();
  const analysis = new Map<string, readonly ValidationMessage[]>();
  /** By object, the last status written: from which version of the object, and what (times aside). */
  const written = new Map<string, { fromResourceVersion: string | undefined; shape: string }>();
  let client: Promise<(key: ObjectKey, status: unknown, signal: AbortSignal) => Promise<'written' | 'gone'>> | undefined;

  const patcher = async (): Promise<(key: ObjectKey, status: unknown, signal: AbortSignal) => Promise<'written' | 'gone'>> => {
    const k8s = await import('@kubernetes/client-node');
    const api = options.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    return async (key, status) => {
      try {
        await api.patchNamespacedCustomObjectStatus(
          { group: info.group, version: info.version, namespace: key.namespace, plural: info.plural, name: key.name, body: { status } },
          mergePatch,
        );
        return 'written';
      } catch (error) {
        if (error instanceof k8s.ApiException && error.code === 404) return 'gone';
        throw error;
      }
    };
  };

  let builder = controllerFor(options.manager, `status-${info.plural}`)
    .watches(source)
    .withLeaderElection(true)
    .withWorkers(Math.max(1, options.workers))
    .withLogger(log);
  if (options.syncErrors) builder = builder.withSyncErrors(options.syncErrors.counter, options.syncErrors.labels);

  const controller = builder.complete(async ({ key, signal, log: bound }) => {
    const object = source.store.get(key);
    const outcome = outcomes.get(formatObjectKey(key));
    if (!object || !outcome) return;
    const generation = object.metadata?.generation;
    // Not yet judged by the config reconciler: it queues the key again once it has.
    const current = generation !== undefined ? outcome.generation === generation : outcome.resourceVersion === object.metadata?.resourceVersion;
    if (!current) return;
    const patch = buildConfigStatus(outcome, object['status'], timestamp(clock.now()), options.status, analysis.get(formatObjectKey(key)));
    if (!patch) return;
    // The store may not have seen our last write yet (its watch event lags under load): the same
    // patch computed from the same version of the object is that write again; its event comes back.
    const id = formatObjectKey(key);
    const sameAsLast = written.get(id);
    const shape = patchShape(patch);
    if (sameAsLast && sameAsLast.fromResourceVersion === object.metadata?.resourceVersion && sameAsLast.shape === shape) return;
    for (const throttle of options.throttles) await throttle.wait(signal);
    client ??= patcher();
    const result = await (await client)(key, patch, signal);
    if (result === 'written') {
      written.set(id, { fromResourceVersion: object.metadata?.resourceVersion, shape });
      bound.debug({ kind, accepted: outcome.accepted }, 'status written');
    } else written.delete(id);
  });

  const sink: ConfigOutcomeSink & AnalysisMessageSink = {
    analysisMessages(key, messages) {
      if (messages.length === 0) analysis.delete(formatObjectKey(key));
      else analysis.set(formatObjectKey(key), messages);
      controller.enqueue(key);
    },
    record(key, outcome) {
      outcomes.set(formatObjectKey(key), outcome);
      controller.enqueue(key);
    },
    forget(key) {
      outcomes.delete(formatObjectKey(key));
      written.delete(formatObjectKey(key));
    },
  };
  return { controller, sink };
}

/** A status patch as JSON without its condition times, which differ between two computations of the same status. */
function patchShape(patch: object): string {
  return JSON.stringify(patch, (name, value: unknown) => (name === 'lastTransitionTime' ? undefined : value));
}

/** RFC 3339 in whole seconds, as Kubernetes writes condition times. */
function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
