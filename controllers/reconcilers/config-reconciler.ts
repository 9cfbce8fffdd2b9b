import {
  UNTRANSLATED_KINDS,
  checkResource,
  completeValidation,
  type KindName,
  type ResourceCheck,
  type TypedResource,
  type ValidationIssue,
} from '../../crds/index.js';
import type { ConfigOutcome } from '../status/config-status.js';
import type { ConfigOutcomeSink } from '../status/config-status-controller.js';
import { describeIssues } from '../status/config-status.js';
import type { InitialSyncTracker } from '../sources/initial-sync-tracker.js';
import { validationInputOf } from '../sources/config-file-checker.js';
import { configContentOf } from '../model/config-store.js';
import type { MeshModelWriter } from '../model/mesh-model.js';
import type { PushEmitter } from './push-emitter.js';
import { formatObjectKey } from '../../names/index.js';
import { TerminalError } from '../../runtime/index.js';
import type { Clock, KubeObject, Logger, MeshMetrics, ObjectKey, Reconciler, Source } from '../../runtime/index.js';

export interface ConfigReconcilerOptions {
  kind: KindName;
  source: Source<KubeObject>;
  model: MeshModelWriter;
  push: PushEmitter;
  /** Scope `validation`: what was rejected and why (what changed in the model goes to the reconcile request's logger). */
  validationLog: Logger;
  metrics: MeshMetrics<'pilot-discovery'>;
  clock: Clock;
  /** Receives every verdict, for status writes (Kubernetes mode with PILOT_ENABLE_STATUS or _ANALYSIS). */
  outcomes?: ConfigOutcomeSink;
  tracker?: InitialSyncTracker;
  /**
   * The check the source made of an object before serving it (the config folder's, on its parse
   * threads), used instead of checking it here; what `checkResource` would give for it.
   */
  checkOf?: (object: KubeObject) => ResourceCheck | undefined;
}

interface Seen {
  /** The object last judged for the key, valid or not, and its content once computed. */
  object: KubeObject;
  content?: string;
  outcome: ConfigOutcome;
}

/**
 * The reconciler of one mesh kind. Level-based: it reads the key's object from the source's store
 * and makes the config store match. A valid object replaces the stored one (no push when the
 * content is the same); a missing one is deleted. An invalid one stays out of the model, so the
 * last good version keeps serving; it is logged, counted in `pilot_total_rejected_configs` and
 * reported as a `TerminalError` (counted by the runtime, not retried) once per distinct content.
 */
export function newConfigReconciler(options: ConfigReconcilerOptions): Reconciler {
  const { kind, source, model, push, validationLog, metrics, clock, outcomes } = options;
  const seen = new Map<string, Seen>();
  const rejected = metrics.counter('pilot_total_rejected_configs');
  const events = metrics.counter('pilot_orch_cfg_events');
  const validateOptions = {
    servicePortsForWorkload: (namespace: string | undefined, selector: Readonly<Record<string, string>>) =>
      model.registry.servicePortsForWorkload(namespace, selector),
  };

  const servingOf = (key: ObjectKey): ConfigOutcome['serving'] => {
    const entry = model.configStore.get(kind, key.namespace, key.name);
    return entry ? { resourceVersion: entry.resourceVersion, generation: entry.resource.metadata.generation } : undefined;
  };

  // Kinds not translated to proxy configuration yet are stored, and their changes push nothing.
  const pushes = !UNTRANSLATED_KINDS.has(kind);
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const id = formatObjectKey(key);
    const object = source.store.get(key);
    if (!object) {
      seen.delete(id);
      outcomes?.forget(key);
      if (model.configStore.delete(kind, key.namespace, key.name)) {
        events.inc({ type: kind, event: 'delete' });
        if (pushes) push.push({ full: true, reason: 'config', configsUpdated: [{ kind, ...key }], startedAt });
        log.debug({ kind, namespace: key.namespace, name: key.name }, 'config deleted');
      }
      return;
    }

    const generation = object.metadata?.generation;
    const resourceVersion = object.metadata?.resourceVersion ?? '';
    const previous = seen.get(id);
    // The very version judged last time (a resync): nothing to do.
    if (previous && resourceVersion !== '' && previous.outcome.resourceVersion === resourceVersion) return;
    let content: string | undefined;
    if (previous) {
      previous.content ??= configContentOf(previous.object);
      content = configContentOf(object);
    }
    if (previous && previous.content === content) {
      // Same config (a status write, a resync): already judged; only the version it is about moved.
      const outcome = { ...previous.outcome, generation, resourceVersion, serving: servingOf(key) };
      previous.outcome = outcome;
      outcomes?.record(key, outcome);
      return;
    }

    const check = options.checkOf?.(object) ?? checkResource(validationInputOf(object));
    const result = completeValidation(check, validateOptions);
    const fields = { kind, namespace: key.namespace, name: key.name, resourceVersion };
    if (result.resource) {
      const existed = model.configStore.get(kind, key.namespace, key.name) !== undefined;
      const changed = model.configStore.apply(withKeptStatus(result.resource as TypedResource, object));
      if (result.warnings.length > 0) validationLog.warn({ ...fields, warnings: formatIssues(result.warnings) }, 'config accepted with warnings');
      if (previous && !previous.outcome.accepted) validationLog.info(fields, 'config valid again');
      const outcome: ConfigOutcome = { generation, resourceVersion, accepted: true, errors: [], warnings: result.warnings, serving: servingOf(key) };
      seen.set(id, { object, ...(content !== undefined ? { content } : {}), outcome });
      outcomes?.record(key, outcome);
      if (changed) {
        events.inc({ type: kind, event: existed ? 'update' : 'add' });
        if (pushes) push.push({ full: true, reason: 'config', configsUpdated: [{ kind, ...key }], startedAt });
        log.debug(fields, 'config updated');
      }
      return;
    }

    const serving = servingOf(key);
    const outcome: ConfigOutcome = {
      generation,
      resourceVersion,
      accepted: false,
      errors: result.errors,
      warnings: result.warnings,
      ...(serving ? { serving } : {}),
    };
    seen.set(id, { object, ...(content !== undefined ? { content } : {}), outcome });
    outcomes?.record(key, outcome);
    rejected.inc({ type: kind });
    validationLog.error(
      { ...fields, errors: formatIssues(result.errors), servingResourceVersion: serving?.resourceVersion },
      serving ? 'config rejected, the last good version keeps serving' : 'config rejected',
    );
    throw new TerminalError(`${kind} ${id} is invalid: ${describeIssues(result.errors)}`, { issues: result.errors });
  };
}

function formatIssues(issues: readonly ValidationIssue[]): string[] {
  return issues.map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`));
}

/**
 * Validation reads no status; a WorkloadEntry keeps its own in the model, where its Healthy
 * condition makes its endpoints ready or not.
 */
function withKeptStatus(resource: TypedResource, object: KubeObject): TypedResource {
  const status: unknown = object['status'];
  if (resource.kind !== 'WorkloadEntry' || typeof status !== 'object' || status === null) return resource;
  return { ...resource, status: status as Record<string, unknown> };
}
