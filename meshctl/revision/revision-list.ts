import type { KubeConfig } from '@kubernetes/client-node';
import { COMPONENTS, type MeshOperatorSpec } from '../../install/index.js';
import { formatTable } from '../kube/table.js';
import { customizationsOf } from './customizations.js';
import { LABELS, revisionLabelValue } from '../../names/index.js';

export interface RevisionSummary {
  readonly revision: string;
  readonly tags: string[];
  /** `namespace/name` of the MeshOperator that installed it, or `<unknown>`. */
  readonly meshOperator: string;
  readonly profile: string;
  readonly components: string[];
  /** With `-v`: what the installation sets beyond its profile (`path=value`). */
  readonly customizations?: string[];
}

/**
 * The control plane revisions: those recorded by installations, and those with injection webhooks.
 * With `manifestsDir` (`-v`), each installation's customizations against the profiles there.
 */
export async function listRevisions(kubeConfig: KubeConfig, manifestsDir?: string): Promise<RevisionSummary[]> {
  const { AdmissionregistrationV1Api, CustomObjectsApi } = await import('@kubernetes/client-node');
  const records = await kubeConfig
    .makeApiClient(CustomObjectsApi)
    .listClusterCustomObject({ group: 'install.mesh.io', version: 'v1alpha1', plural: 'meshoperators' })
    .then((list) => (list as { items?: { metadata?: { name?: string; namespace?: string }; spec?: MeshOperatorSpec }[] }).items ?? [])
    .catch(() => []);
  const webhooks = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration({ labelSelector: LABELS.revision })).items;
  const revisions = new Map<string, RevisionSummary>();
  const entry = (revision: string): RevisionSummary => {
    let summary = revisions.get(revision);
    if (!summary) {
      summary = { revision, tags: [], meshOperator: '<unknown>', profile: '<unknown>', components: [] };
      revisions.set(revision, summary);
    }
    return summary;
  };
  for (const record of records) {
    const spec = record.spec ?? {};
    const revision = revisionLabelValue(spec.revision);
    revisions.set(revision, {
      ...entry(revision),
      meshOperator: `${record.metadata?.namespace ?? ''}/${record.metadata?.name ?? ''}`,
      profile: spec.profile ?? 'default',
      components: enabledComponents(spec),
      ...(manifestsDir === undefined ? {} : { customizations: customizationsOf(spec, manifestsDir) }),
    });
  }
  for (const configuration of webhooks) {
    const summary = entry(configuration.metadata?.labels?.[LABELS.revision] ?? '');
    const tag = configuration.metadata?.labels?.[LABELS.tag];
    if (tag !== undefined) summary.tags.push(tag);
  }
  return [...revisions.values()].sort((a, b) => a.revision.localeCompare(b.revision));
}

/** The components an installation enables, lowercase (`base`, `pilot`, `ingressgateways`). */
export function enabledComponents(spec: MeshOperatorSpec): string[] {
  const components = spec.components ?? {};
  const on: Record<(typeof COMPONENTS)[number], boolean> = {
    Base: components.base?.enabled !== false,
    Pilot: components.pilot?.enabled !== false,
    IngressGateways: (components.ingressGateways ?? []).some((g) => g.enabled !== false),
    EgressGateways: (components.egressGateways ?? []).some((g) => g.enabled !== false),
  };
  return COMPONENTS.filter((component) => on[component]).map((component) => component.toLowerCase());
}

/**
 * `x revision list` as the reference prints it (tabwriter padding 1, one required component per
 * line); `-v` adds the CUSTOMIZATIONS column, one per line.
 */
export function renderRevisionTable(revisions: readonly RevisionSummary[], verbose = false): string {
  if (revisions.length === 0) return 'No mesh installation found.\n';
  const rows: string[][] = [['REVISION', 'TAG', 'MESH-OPERATOR-CR', 'PROFILE', 'REQD-COMPONENTS', ...(verbose ? ['CUSTOMIZATIONS'] : [])]];
  for (const revision of revisions) {
    const customizations = revision.customizations?.length ? revision.customizations : revision.meshOperator === '<unknown>' ? [''] : ['<no-customization>'];
    const lines = Math.max(1, revision.components.length, verbose ? customizations.length : 0);
    for (let i = 0; i < lines; i++) {
      const head = i === 0 ? [revision.revision, revision.tags.sort().join(',') || '<no-tag>', revision.meshOperator, revision.profile] : ['', '', '', ''];
      rows.push([...head, revision.components[i] ?? '', ...(verbose ? [customizations[i] ?? ''] : [])]);
    }
  }
  return formatTable(rows, 1);
}
