import { createHash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { IGNORE_RECONCILE_ANNOTATION, LABELS } from '../../names/index.js';
import type { MeshOperator } from '../mesh-operator.js';
import { buildOperatorConfig } from '../operator-config.js';
import { COMPONENTS, type ComponentName } from '../chart-values.js';
import { renderInstallation, type RenderedComponent } from '../render.js';
import { applyInstallation } from '../apply-installation.js';
import { INSTALLED_KINDS, objectKey, objectsOfManifest, type ClusterObjects } from '../cluster-objects.js';
import { UsageError, errorMessage, type KubeObject, type Logger, type MeshMetrics, type ObjectKey, type Reconciler, type Store } from '../../runtime/index.js';
import { componentStatusOf, type MeshOperatorStatus } from './operator-status.js';

export interface MeshOperatorReconcilerOptions {
  /** The watched MeshOperator resources. */
  readonly store: Store<KubeObject>;
  readonly cluster: ClusterObjects;
  /** Holds `charts/` and `profiles/`. */
  readonly manifestsDir: string;
  /** The helm program; default `helm` on the PATH. */
  readonly helm?: string;
  /** `--revision`: only MeshOperators of this revision ('' is the default one). */
  readonly revision: string;
  /** Writes `status` through the status subresource. */
  readonly writeStatus: (key: ObjectKey, status: MeshOperatorStatus) => Promise<void>;
  readonly metrics: MeshMetrics<'meshctl'>;
}

/** What was applied for one MeshOperator: each object's content hash, for the spec generation it was rendered from. */
interface AppliedCache {
  generation: number | undefined;
  hashes: Map<string, string>;
}

/**
 * The install operator's reconciler: a MeshOperator is rendered and applied exactly as
 * `meshctl install` does (profile under it, its spec over it, the same charts, server-side apply
 * in component order, what it owned and no longer renders pruned), then its status says whether
 * each component's Deployments are ready. Objects applied unchanged and still present are skipped;
 * a deleted MeshOperator takes what it owned with it. A spec that does not validate is an `ERROR`
 * status, not a retry: only a change of it can help.
 */
export function newMeshOperatorReconciler(options: MeshOperatorReconcilerOptions): Reconciler {
  const { store, cluster, metrics } = options;
  const caches = new Map<string, AppliedCache>();
  const owned = new Map<string, Map<string, number>>();
  const counters = {
    deleted: metrics.counter('cr_deletion_total'),
    flushed: metrics.counter('cache_flush_total'),
    invalid: metrics.counter('cr_validation_error_total'),
    rendered: metrics.counter('render_manifest_total'),
    renderErrors: metrics.counter('manifest_render_error_total'),
    created: metrics.counter('resource_creation_total'),
    updated: metrics.counter('resource_update_total'),
    removed: metrics.counter('resource_deletion_total'),
    pruned: metrics.counter('resource_prune_total'),
  };
  const ownedGauge = metrics.gauge('owned_resource_total');

  const listOwned = async (name: string): Promise<KubernetesObject[]> =>
    (await Promise.all(INSTALLED_KINDS.map(({ apiVersion, kind }) => cluster.list(apiVersion, kind, `${LABELS.operatorOwner}=${name}`)))).flat();

  const recordOwned = (id: string, objects: readonly KubernetesObject[] | undefined): void => {
    if (objects) {
      const byKind = new Map<string, number>();
      for (const object of objects) byKind.set(object.kind ?? '', (byKind.get(object.kind ?? '') ?? 0) + 1);
      owned.set(id, byKind);
    } else owned.delete(id);
    ownedGauge.reset();
    const totals = new Map<string, number>();
    for (const byKind of owned.values()) for (const [kind, count] of byKind) totals.set(kind, (totals.get(kind) ?? 0) + count);
    for (const { kind } of INSTALLED_KINDS) ownedGauge.set({ kind }, totals.get(kind) ?? 0);
  };

  return async ({ key, log }) => {
    const id = `${key.namespace}/${key.name}`;
    const object = store.get(key) as (KubeObject & { spec?: MeshOperator['spec'] }) | undefined;
    if (!object) {
      await removeOwned(key.name, id, log);
      return;
    }
    if (object.metadata?.annotations?.[IGNORE_RECONCILE_ANNOTATION] === 'true') return;
    if ((object.spec?.revision ?? '') !== options.revision) return;

    let config: MeshOperator;
    try {
      config = {
        ...buildOperatorConfig({ manifestsDir: options.manifestsDir, files: [], sets: [], documents: [{ spec: object.spec ?? {} }] }),
        metadata: { name: key.name },
      };
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      counters.invalid.inc();
      await options.writeStatus(key, { status: 'ERROR', message: error.message });
      log.warn({ meshOperator: id, error: error.message }, 'MeshOperator is invalid; waiting for a change');
      return;
    }

    let rendered: RenderedComponent[];
    try {
      rendered = await renderInstallation(config, { manifestsDir: options.manifestsDir, ...(options.helm ? { helm: options.helm } : {}) });
    } catch (error) {
      counters.renderErrors.inc({ component: 'all', render_error: 'helm' });
      await options.writeStatus(key, { status: 'ERROR', message: errorMessage(error) });
      throw error;
    }
    for (const component of rendered) counters.rendered.inc({ component: component.component });

    const cache = caches.get(id) ?? { generation: object.metadata?.generation, hashes: new Map<string, string>() };
    if (cache.generation !== object.metadata?.generation) {
      counters.flushed.inc();
      cache.hashes.clear();
      cache.generation = object.metadata?.generation;
    }
    caches.set(id, cache);
    const present = new Set((await listOwned(key.name)).map(objectKey));
    const current = object['status'] as MeshOperatorStatus | undefined;
    if (current?.status !== 'HEALTHY' && current?.status !== 'RECONCILING') await options.writeStatus(key, { status: 'RECONCILING' });
    try {
      await applyInstallation({
        cluster,
        rendered,
        config,
        dryRun: false,
        readinessTimeoutMs: 60_000,
        record: false,
        waitForDeployments: false,
        progress: (line) => log.debug({ meshOperator: id }, line.trim()),
        observer: {
          shouldApply: (o) => !(present.has(objectKey(o)) && cache.hashes.get(objectKey(o)) === hashOf(o)),
          applied: (o) => {
            (present.has(objectKey(o)) ? counters.updated : counters.created).inc({ kind: o.kind ?? '' });
            cache.hashes.set(objectKey(o), hashOf(o));
          },
          pruned: (o) => counters.pruned.inc({ kind: o.kind ?? '' }),
        },
      });
    } catch (error) {
      caches.delete(id);
      counters.flushed.inc();
      await options.writeStatus(key, { status: 'ERROR', message: errorMessage(error) });
      throw error;
    }
    recordOwned(id, await listOwned(key.name));
    const status = await statusOf(rendered);
    await options.writeStatus(key, status);
    log.info({ meshOperator: id, status: status.status }, 'MeshOperator reconciled');
  };

  async function removeOwned(name: string, id: string, log: Logger): Promise<void> {
    if (!caches.has(id) && !owned.has(id)) return;
    caches.delete(id);
    for (const object of await listOwned(name)) {
      await cluster.remove(object, false);
      counters.removed.inc({ kind: object.kind ?? '' });
    }
    recordOwned(id, undefined);
    counters.deleted.inc();
    log.info({ meshOperator: id }, 'MeshOperator deleted: removed what it installed');
  }

  async function statusOf(rendered: readonly RenderedComponent[]): Promise<MeshOperatorStatus> {
    const components = new Map<ComponentName, KubernetesObject[]>();
    for (const component of rendered) {
      const deployments = objectsOfManifest(component.manifest).filter((o) => o.kind === 'Deployment');
      components.set(component.component, [...(components.get(component.component) ?? []), ...deployments]);
    }
    const componentStatus: MeshOperatorStatus['componentStatus'] = {};
    for (const name of COMPONENTS) {
      const deployments = components.get(name);
      if (!deployments) continue;
      componentStatus[name] = await componentStatusOf(cluster, deployments);
    }
    const statuses = Object.values(componentStatus).map((c) => c.status);
    return { status: statuses.every((s) => s === 'HEALTHY') ? 'HEALTHY' : 'RECONCILING', componentStatus };
  }
}

function hashOf(object: KubernetesObject): string {
  return createHash('sha256').update(JSON.stringify(object)).digest('hex');
}
