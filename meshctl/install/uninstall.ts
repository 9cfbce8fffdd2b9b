import type { KubernetesObject } from '@kubernetes/client-node';
import { UsageError } from '../../runtime/index.js';
import { EXIT_USAGE } from '../../install/index.js';
import { INSTALLED_KINDS, objectKey, type ClusterObjects } from '../../install/index.js';
import { ANNOTATIONS, LABELS, revisionLabelValue } from '../../names/index.js';

/** The API groups of our CRDs: `--purge` removes their definitions. */
const MESH_GROUPS = ['security.mesh.io', 'networking.mesh.io', 'install.mesh.io'];

export interface UninstallOptions {
  readonly cluster: ClusterObjects;
  /** `--revision`/`-r`; '' with `--purge`. */
  readonly revision: string;
  readonly purge: boolean;
  readonly dryRun: boolean;
  readonly progress: (line: string) => void;
}

/** The reference's refusal when nothing says what to remove. */
export function requireUninstallTarget(revision: string, filenames: readonly string[], purge: boolean): void {
  if (revision === '' && filenames.length === 0 && !purge) {
    throw new UsageError('at least one of the --revision (or --set revision=<revision>), --filename or --purge flags must be set', { exitCode: EXIT_USAGE });
  }
}

/**
 * `meshctl x uninstall`: the objects of one revision (by the `mesh.io/rev` label, and the
 * installer's `part-of` label), or with `--purge` everything of the mesh, cluster-scoped objects
 * and CRDs included.
 */
export async function uninstall(options: UninstallOptions): Promise<number> {
  const { cluster, progress } = options;
  let removed = 0;
  for (const object of await prunedObjects(cluster, options.revision, options.purge)) {
    await cluster.remove(object, options.dryRun);
    removed++;
    progress(`  Removed ${objectKey(object)}.`);
  }
  if (options.purge) {
    for (const crd of await cluster.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition', '')) {
      if (!MESH_GROUPS.some((group) => (crd.metadata?.name ?? '').endsWith(`.${group}`))) continue;
      await cluster.remove(crd, options.dryRun);
      removed++;
      progress(`  Removed ${objectKey(crd)}.`);
    }
  }
  progress('✔ Uninstall complete');
  return removed;
}

/** What an uninstall removes but the CRDs: the installer's objects of the revision, or of every revision with `purge`. */
async function prunedObjects(cluster: ClusterObjects, revision: string, purge: boolean): Promise<KubernetesObject[]> {
  const selector = purge ? `${LABELS.partOf}=mesh` : `${LABELS.partOf}=mesh,${LABELS.revision}=${revisionLabelValue(revision)}`;
  const objects: KubernetesObject[] = [];
  for (const { apiVersion, kind } of INSTALLED_KINDS) objects.push(...(await cluster.list(apiVersion, kind, selector)));
  return objects;
}

/**
 * `uninstall --verbose` without `--purge`, as the reference words it: the objects to be removed,
 * by kind (`Deployment: meshd. Service: meshd. `), or '' when there are none.
 */
export async function prunedResourcesNotice(cluster: ClusterObjects, revision: string): Promise<string> {
  const byKind = new Map<string, string[]>();
  for (const object of await prunedObjects(cluster, revision, false)) {
    const kind = object.kind ?? '';
    byKind.set(kind, [...(byKind.get(kind) ?? []), object.metadata?.name ?? '']);
  }
  if (byKind.size === 0) return '';
  const list = [...byKind].map(([kind, names]) => `${kind}: ${names.join(', ')}. `).join('');
  return `The following resources will be pruned from the cluster: ${list}\n`;
}

/**
 * The reference's warning before an uninstall: the proxies (pods injected by the revision, or by
 * any with `--purge`, read from their sidecar status) that would be left without a control plane.
 */
export async function orphanedProxiesWarning(cluster: ClusterObjects, revision: string, purge: boolean): Promise<string> {
  const wanted = revisionLabelValue(revision);
  const byRevision = new Map<string, string[]>();
  for (const pod of await cluster.list('v1', 'Pod', '')) {
    const status = pod.metadata?.annotations?.[ANNOTATIONS.status];
    if (status === undefined) continue;
    let injectedBy: string;
    try {
      injectedBy = (JSON.parse(status) as { revision?: string }).revision || 'default';
    } catch {
      continue;
    }
    if (!purge && injectedBy !== wanted) continue;
    byRevision.set(injectedBy, [...(byRevision.get(injectedBy) ?? []), `${pod.metadata?.name ?? ''}.${pod.metadata?.namespace ?? ''}`]);
  }
  return [...byRevision]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([rev, proxies]) =>
        `There are still ${proxies.length} proxies pointing to the control plane revision ${rev}\n${proxies.sort().join('\n')}\nIf you proceed with the uninstall, these proxies will become detached from any control plane and will not function correctly.\n`,
    )
    .join('');
}
