import type { KubeConfig, V1MutatingWebhook, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { MeshError } from '../../runtime/index.js';
import { formatTable } from '../kube/table.js';
import { formatMessage, sortedDeduped, webhookOverlaps } from '../../analysis/index.js';
import { LABELS, revisionLabelValue } from '../../names/index.js';

export interface TagOptions {
  readonly tag: string;
  /** `--revision`; '' is `default`. */
  readonly revision: string;
  readonly overwrite: boolean;
  /** `--webhook-name`; default `mesh-revision-tag-<tag>`. */
  readonly webhookName: string;
  /** `-y`: set the tag even when its webhooks overlap others (MSH0139). */
  readonly skipConfirmation?: boolean;
}

/**
 * The MutatingWebhookConfiguration of a revision tag: the revision's own injection webhooks
 * (endpoint and `caBundle` copied; the daemon's patcher keeps the bundle fresh, the tag carrying
 * the revision's label), selecting namespaces and pods labelled `mesh.io/rev=<tag>`.
 */
export async function buildTagWebhook(kubeConfig: KubeConfig, options: TagOptions): Promise<V1MutatingWebhookConfiguration> {
  const { AdmissionregistrationV1Api } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const revision = revisionLabelValue(options.revision);
  const all = (await api.listMutatingWebhookConfiguration({ labelSelector: LABELS.revision })).items;
  const canonical = all.filter((c) => c.metadata?.labels?.[LABELS.revision] === revision && c.metadata.labels[LABELS.tag] === undefined);
  if (canonical.length === 0) throw new MeshError('tag-refused', `cannot modify tag: cannot find MutatingWebhookConfiguration with revision "${revision}"`);
  if (canonical.length > 1)
    throw new MeshError('tag-refused', `found multiple canonical webhooks with revision "${revision}": ${canonical.map((c) => c.metadata?.name).join(', ')}`);
  if (all.some((c) => c.metadata?.labels?.[LABELS.revision] === options.tag && c.metadata.labels[LABELS.tag] === undefined)) {
    throw new MeshError('tag-refused', `cannot create revision tag "${options.tag}": found existing control plane revision with same name`);
  }
  const existing = all.filter((c) => c.metadata?.labels?.[LABELS.tag] === options.tag);
  if (existing.length > 0 && !options.overwrite) throw new MeshError('tag-refused', `revision tag "${options.tag}" already exists, and --overwrite is false`);
  const source = canonical[0] as V1MutatingWebhookConfiguration;
  const webhooks = (source.webhooks ?? []).filter((w) => w.name.startsWith('rev.')).map((webhook) => retarget(webhook, options.tag));
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: {
      name: options.webhookName || `mesh-revision-tag-${options.tag}`,
      labels: { [LABELS.tag]: options.tag, [LABELS.revision]: revision, app: 'sidecar-injector', [LABELS.partOf]: 'mesh' },
    },
    webhooks,
  };
}

/** Points one of the revision's `rev.` webhooks at the tag: `mesh.io/rev In [<revision>]` becomes `In [<tag>]`. */
function retarget(webhook: V1MutatingWebhook, tag: string): V1MutatingWebhook {
  const swap = (selector: V1MutatingWebhook['namespaceSelector']): V1MutatingWebhook['namespaceSelector'] =>
    selector
      ? {
          ...selector,
          matchExpressions: (selector.matchExpressions ?? []).map((e) => (e.key === LABELS.revision && e.operator === 'In' ? { ...e, values: [tag] } : e)),
        }
      : selector;
  return {
    ...webhook,
    ...(webhook.namespaceSelector ? { namespaceSelector: swap(webhook.namespaceSelector) } : {}),
    ...(webhook.objectSelector ? { objectSelector: swap(webhook.objectSelector) } : {}),
  };
}

/** `x revision tag set`: creates (or with `--overwrite` replaces) the tag's webhook configuration. */
export async function setTag(kubeConfig: KubeConfig, options: TagOptions): Promise<string> {
  const { AdmissionregistrationV1Api } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const webhook = await buildTagWebhook(kubeConfig, options);
  const conflict = await tagConflict(kubeConfig, webhook, options.tag);
  if (conflict !== undefined && options.skipConfirmation !== true) throw new MeshError('tag-refused', conflict);
  for (const old of (await api.listMutatingWebhookConfiguration({ labelSelector: `${LABELS.tag}=${options.tag}` })).items) {
    await api.deleteMutatingWebhookConfiguration({ name: old.metadata?.name ?? '' });
  }
  await api.createMutatingWebhookConfiguration({ body: webhook });
  return `Revision tag "${options.tag}" created, referencing control plane revision "${revisionLabelValue(options.revision)}". To enable injection using this\nrevision tag, use 'kubectl label namespace <NAMESPACE> ${LABELS.revision}=${options.tag}'\n`;
}

/** Why the tag's webhook would inject pods another webhook also injects (MSH0139), or undefined. */
async function tagConflict(kubeConfig: KubeConfig, webhook: V1MutatingWebhookConfiguration, tag: string): Promise<string | undefined> {
  const { AdmissionregistrationV1Api } = await import('@kubernetes/client-node');
  const others = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration()).items.filter(
    (c) => c.metadata?.labels?.[LABELS.tag] !== tag,
  );
  const conflicts = webhookOverlaps([...others, webhook]).filter((m) => m.origin === `MutatingWebhookConfiguration ${webhook.metadata?.name ?? ''}`);
  if (conflicts.length === 0) return undefined;
  return `creating tag would conflict, pass --skip-confirmation to proceed:\n${sortedDeduped(conflicts).map(formatMessage).join('\n')}`;
}

/**
 * `x revision tag generate`: the tag's webhook configuration as YAML, applied by the user. As the
 * reference, a conflict with another webhook is a warning (on stderr) unless `skipConfirmation`;
 * the YAML is written either way.
 */
export async function generateTag(kubeConfig: KubeConfig, options: TagOptions): Promise<{ yaml: string; warning?: string }> {
  const webhook = await buildTagWebhook(kubeConfig, options);
  const conflict = options.skipConfirmation === true ? undefined : await tagConflict(kubeConfig, webhook, options.tag);
  return { yaml: stringify(webhook, { lineWidth: 0 }), ...(conflict !== undefined ? { warning: `${conflict}\n` } : {}) };
}

/** `x revision tag list`: each tag, its revision and the namespaces using it. */
export async function listTags(kubeConfig: KubeConfig): Promise<string> {
  const { AdmissionregistrationV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const configurations = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration({ labelSelector: LABELS.tag })).items;
  if (configurations.length === 0) return 'No mesh revision tag MutatingWebhookConfigurations to list\n';
  const namespaces = (await kubeConfig.makeApiClient(CoreV1Api).listNamespace()).items;
  const rows = configurations
    .map((c) => {
      const tag = c.metadata?.labels?.[LABELS.tag] ?? '';
      const using = namespaces.filter((ns) => ns.metadata?.labels?.[LABELS.revision] === tag).map((ns) => ns.metadata?.name ?? '');
      return [tag, c.metadata?.labels?.[LABELS.revision] ?? '', using.join(',')];
    })
    .sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
  return formatTable([['TAG', 'REVISION', 'NAMESPACES'], ...rows], 1);
}

/** `x revision tag remove`: deletes the tag's webhook configurations; refuses while namespaces use it unless `skipConfirmation`. */
export async function removeTag(kubeConfig: KubeConfig, tag: string, skipConfirmation: boolean): Promise<string> {
  const { AdmissionregistrationV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const configurations = (await api.listMutatingWebhookConfiguration({ labelSelector: `${LABELS.tag}=${tag}` })).items;
  if (configurations.length === 0) throw new MeshError('tag-refused', `cannot remove tag "${tag}": cannot find MutatingWebhookConfiguration for tag`);
  const using = (await kubeConfig.makeApiClient(CoreV1Api).listNamespace({ labelSelector: `${LABELS.revision}=${tag}` })).items.map(
    (ns) => ns.metadata?.name ?? '',
  );
  if (using.length > 0 && !skipConfirmation) {
    throw new MeshError('tag-refused', `cannot remove tag "${tag}": namespaces still use it: ${using.join(', ')}; use -y to remove it anyway`);
  }
  for (const configuration of configurations) await api.deleteMutatingWebhookConfiguration({ name: configuration.metadata?.name ?? '' });
  return `Revision tag ${tag} removed\n`;
}
