import type { KubeConfig, V1ConfigMap, V1MutatingWebhookConfiguration, V1Namespace, V1Pod } from '@kubernetes/client-node';
import { IGNORED_NAMESPACES, LABELS, selectorMatches, type UncheckedLabelSelector } from '../../names/index.js';
import { readInjectionStatus } from '../../webhook/inject/index.js';
import { formatTable } from '../kube/table.js';

const NOT_MESHED = '<non-mesh>';

/** What `meshctl x injector list` reads from the cluster. */
export interface InjectorInventory {
  readonly namespaces: readonly V1Namespace[];
  readonly hooks: readonly V1MutatingWebhookConfiguration[];
  readonly pods: readonly V1Pod[];
  /** The injector ConfigMaps (labelled with a revision). */
  readonly configMaps: readonly V1ConfigMap[];
}

export async function readInjectorInventory(kubeConfig: KubeConfig): Promise<InjectorInventory> {
  const { AdmissionregistrationV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const [namespaces, hooks, pods, configMaps] = await Promise.all([
    core.listNamespace(),
    admission.listMutatingWebhookConfiguration({ labelSelector: LABELS.revision }),
    core.listPodForAllNamespaces(),
    core.listConfigMapForAllNamespaces({ labelSelector: LABELS.revision }),
  ]);
  return { namespaces: namespaces.items, hooks: hooks.items, pods: pods.items, configMaps: configMaps.items };
}

interface RevisionCount {
  pods: number;
  disabled: number;
  needsRestart: number;
}

/**
 * The two tables of the reference's `injector list`: each namespace with the revision that
 * injects it and its pods by injected revision (flagging pods to restart), then each injection
 * hook with the namespaces it injects and the sidecar image of its revision.
 */
export function renderInjectorList(inventory: InjectorInventory, meshNamespace: string): string {
  const namespaces = inventory.namespaces
    .filter((ns) => !IGNORED_NAMESPACES.includes(nameOf(ns)) && nameOf(ns) !== meshNamespace)
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  const hooks = [...inventory.hooks].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  return `${renderNamespaces(namespaces, hooks, inventory.pods)}\n${renderHooks(namespaces, hooks, injectedImages(inventory.configMaps))}`;
}

function renderNamespaces(namespaces: readonly V1Namespace[], hooks: readonly V1MutatingWebhookConfiguration[], pods: readonly V1Pod[]): string {
  const rows: string[][] = [];
  for (const namespace of namespaces) {
    const revision = injectedRevision(namespace, hooks);
    const counts = countByRevision(
      pods.filter((pod) => pod.metadata?.namespace === nameOf(namespace)),
      revision,
    );
    if (counts.size === 0 && revision !== '') counts.set(revision, { pods: 0, disabled: 0, needsRestart: 0 });
    for (const [podRevision, count] of [...counts].sort(([a], [b]) => a.localeCompare(b)))
      rows.push([nameOf(namespace), revision, renderCount(podRevision, count)]);
  }
  if (rows.length === 0) return 'No mesh injected namespaces present.\n';
  return formatTable([['NAMESPACE', 'MESH-REVISION', 'POD-REVISIONS'], ...rows], 1);
}

function renderHooks(namespaces: readonly V1Namespace[], hooks: readonly V1MutatingWebhookConfiguration[], images: ReadonlyMap<string, string>): string {
  if (hooks.length === 0) return 'No mesh injection hooks present.\n';
  const rows: string[][] = [['NAMESPACES', 'INJECTOR-HOOK', 'MESH-REVISION', 'SIDECAR-IMAGE']];
  for (const hook of hooks) {
    const revision = hook.metadata?.labels?.[LABELS.revision] ?? '';
    const image = images.get(revision) ?? '';
    const injected = namespaces.filter((ns) => (hook.webhooks ?? []).some((webhook) => namespaceSelected(webhook.namespaceSelector, ns)));
    if (injected.length === 0) rows.push(['DOES NOT AUTOINJECT', nameOf(hook), revision, image]);
    for (const namespace of injected) rows.push([nameOf(namespace), nameOf(hook), revision, image]);
  }
  return formatTable(rows, 1);
}

/** The revision whose hook selects the namespace; `MISSING/<label>` when it asks for injection no hook gives. */
function injectedRevision(namespace: V1Namespace, hooks: readonly V1MutatingWebhookConfiguration[]): string {
  const hook = hooks.find((h) => (h.webhooks ?? []).some((webhook) => namespaceSelected(webhook.namespaceSelector, namespace)));
  if (hook) return hook.metadata?.labels?.[LABELS.revision] ?? '';
  const labels = namespace.metadata?.labels ?? {};
  const revision = labels[LABELS.revision] ?? '';
  if (revision !== '') return `MISSING/${revision}`;
  const legacy = labels[LABELS.namespaceInjection];
  return legacy === undefined || legacy === 'disabled' ? '' : `MISSING/${LABELS.namespaceInjection}`;
}

function namespaceSelected(selector: unknown, namespace: V1Namespace): boolean {
  // An absent selector selects every namespace, as the API server reads it.
  return selectorMatches((selector ?? {}) as UncheckedLabelSelector, namespace.metadata?.labels ?? {});
}

function countByRevision(pods: readonly V1Pod[], expected: string): Map<string, RevisionCount> {
  const counts = new Map<string, RevisionCount>();
  for (const pod of pods) {
    const revision = readInjectionStatus(pod as Record<string, unknown>)?.revision ?? '';
    const key = revision === '' ? NOT_MESHED : revision;
    const count = counts.get(key) ?? { pods: 0, disabled: 0, needsRestart: 0 };
    count.pods++;
    if (injectionDisabled(pod)) count.disabled++;
    else if (revision !== expected) count.needsRestart++;
    counts.set(key, count);
  }
  return counts;
}

function injectionDisabled(pod: V1Pod): boolean {
  const value = pod.metadata?.labels?.[LABELS.inject] ?? pod.metadata?.annotations?.[LABELS.inject] ?? '';
  return value.toLowerCase() === 'false';
}

function renderCount(revision: string, count: RevisionCount): string {
  if (count.pods === 0) return '<no pods>';
  const disabled = count.disabled > 0 ? ` (injection disabled: ${count.disabled})` : '';
  const restart = count.needsRestart > 0 ? ` NEEDS RESTART: ${count.needsRestart}` : '';
  return `${revision}: ${count.pods}${disabled}${restart}`;
}

/** Revision → the proxy image its injector ConfigMap's values name (`<hub>/<image>:<tag>`). */
function injectedImages(configMaps: readonly V1ConfigMap[]): Map<string, string> {
  const images = new Map<string, string>();
  for (const configMap of configMaps) {
    const revision = configMap.metadata?.labels?.[LABELS.revision];
    const values = configMap.data?.['values'];
    if (revision === undefined || values === undefined) continue;
    try {
      const global = (JSON.parse(values) as { global?: { hub?: string; tag?: string; proxy?: { image?: string } } }).global ?? {};
      const image = global.proxy?.image ?? 'proxyv2';
      images.set(revision, image.includes('/') ? image : `${global.hub ?? ''}/${image}:${global.tag ?? ''}`);
    } catch {
      // Not an injector ConfigMap (or a broken one): no image to show.
    }
  }
  return images;
}

function nameOf(object: { metadata?: { name?: string } }): string {
  return object.metadata?.name ?? '';
}

/** `meshctl x injector list` against the cluster of the global flags. */
export async function listInjectors(kubeConfig: KubeConfig, meshNamespace: string): Promise<string> {
  return renderInjectorList(await readInjectorInventory(kubeConfig), meshNamespace);
}
