import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { MeshError } from '../../runtime/index.js';
import type { MeshOperatorSpec } from '../../install/index.js';
import { customizationsOf } from './customizations.js';
import { enabledComponents } from './revision-list.js';
import { ANNOTATIONS, DAEMON_NAME, LABELS } from '../../names/index.js';

export interface PodSummary {
  readonly namespace: string;
  readonly name: string;
  readonly address: string;
  readonly status: string;
  /** Since creation, as kubectl prints it (`5s`, `3m2s`, `4d`). */
  readonly age: string;
}

export interface RevisionDescription {
  readonly revision: string;
  readonly meshOperators: { namespace: string; name: string; profile: string; components: string[]; customizations: string[] }[];
  /** The revision's injection webhook configurations, its tags' among them. */
  readonly webhooks: { name: string; revision: string; tag?: string }[];
  readonly meshdEnabled: boolean;
  readonly controlPlanePods: PodSummary[];
  readonly ingressGateways: { declared: string[]; pods: PodSummary[] };
  readonly egressGateways: { declared: string[]; pods: PodSummary[] };
  /** With `-v`: the namespaces selecting the revision (or one of its tags), by the label that does. */
  readonly namespaces?: { name: string; label: string }[];
  /** With `-v`: the pods (not the control plane's) that use it, by label or by the injected sidecar's status. */
  readonly pods?: PodSummary[];
}

export interface DescribeOptions {
  /** `-d/--manifests`: the profiles the customizations are measured against. */
  readonly manifestsDir: string;
  readonly verbose: boolean;
  /** Milliseconds since the epoch, for the pods' ages. */
  readonly now: number;
}

interface Record {
  metadata?: { name?: string; namespace?: string };
  spec?: MeshOperatorSpec;
}

/** `x revision describe <revision>`: everything of one revision; an error naming it when nothing is. */
export async function describeRevision(kubeConfig: KubeConfig, revision: string, options: DescribeOptions): Promise<RevisionDescription> {
  const [description] = await describeRevisions(kubeConfig, [revision], options);
  if (!description) throw new MeshError('revision-not-found', `revision ${revision} is not present`);
  return description;
}

/** The descriptions of the revisions that exist among `revisions`, in that order. */
export async function describeRevisions(kubeConfig: KubeConfig, revisions: readonly string[], options: DescribeOptions): Promise<RevisionDescription[]> {
  const { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi } = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const [records, webhooks, pods, namespaces] = await Promise.all([
    kubeConfig
      .makeApiClient(CustomObjectsApi)
      .listClusterCustomObject({ group: 'install.mesh.io', version: 'v1alpha1', plural: 'meshoperators' })
      .then((list) => (list as { items?: Record[] }).items ?? [])
      .catch(() => [] as Record[]),
    kubeConfig
      .makeApiClient(AdmissionregistrationV1Api)
      .listMutatingWebhookConfiguration({ labelSelector: LABELS.revision })
      .then((l) => l.items),
    core.listPodForAllNamespaces().then((l) => l.items),
    options.verbose ? core.listNamespace().then((l) => l.items) : Promise.resolve([]),
  ]);
  const summary = (pod: V1Pod): PodSummary => ({
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    address: pod.status?.podIP ?? '',
    status: pod.status?.phase ?? '',
    age: humanAge(options.now - new Date(pod.metadata?.creationTimestamp ?? options.now).getTime()),
  });
  const byName = (a: PodSummary, b: PodSummary): number => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
  const descriptions: RevisionDescription[] = [];
  for (const revision of revisions) {
    const own = records.filter((r) => (r.spec?.revision || 'default') === revision);
    const hooks = webhooks.filter((c) => c.metadata?.labels?.[LABELS.revision] === revision);
    const tags = hooks.map((c) => c.metadata?.labels?.[LABELS.tag]).filter((t): t is string => t !== undefined);
    const controlPlane = pods.filter((p) => p.metadata?.labels?.['app'] === DAEMON_NAME && p.metadata.labels[LABELS.revision] === revision);
    const gatewayPods = (label: string): PodSummary[] =>
      pods
        .filter((p) => p.metadata?.labels?.['mesh'] === label && podRevision(p) === revision)
        .map(summary)
        .sort(byName);
    const declared = (kind: 'ingressGateways' | 'egressGateways'): string[] =>
      own.flatMap((r) => (r.spec?.components?.[kind] ?? []).filter((g) => g.enabled !== false).map((g) => g.name));
    const description: RevisionDescription = {
      revision,
      meshOperators: own.map((r) => ({
        namespace: r.metadata?.namespace ?? '',
        name: r.metadata?.name ?? '',
        profile: r.spec?.profile ?? 'default',
        components: enabledComponents(r.spec ?? {}),
        customizations: customizationsOf(r.spec ?? {}, options.manifestsDir),
      })),
      webhooks: hooks
        .map((c) => ({
          name: c.metadata?.name ?? '',
          revision,
          ...(c.metadata?.labels?.[LABELS.tag] !== undefined ? { tag: c.metadata.labels[LABELS.tag] } : {}),
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      meshdEnabled: own.some((r) => r.spec?.components?.pilot?.enabled !== false),
      controlPlanePods: controlPlane.map(summary).sort(byName),
      ingressGateways: { declared: declared('ingressGateways'), pods: gatewayPods('ingressgateway') },
      egressGateways: { declared: declared('egressGateways'), pods: gatewayPods('egressgateway') },
    };
    const exists = own.length + hooks.length + controlPlane.length + description.ingressGateways.pods.length + description.egressGateways.pods.length > 0;
    if (!exists) continue;
    if (!options.verbose) {
      descriptions.push(description);
      continue;
    }
    const aliases = [revision, ...tags];
    const using = namespaces.flatMap((ns) => {
      const labels = ns.metadata?.labels ?? {};
      const rev = labels[LABELS.revision];
      const selected =
        rev !== undefined && aliases.includes(rev)
          ? `${LABELS.revision}=${rev}`
          : revision === 'default' && rev === undefined && labels[LABELS.namespaceInjection] === 'enabled'
            ? `${LABELS.namespaceInjection}=enabled`
            : undefined;
      return selected ? [{ name: ns.metadata?.name ?? '', label: selected }] : [];
    });
    const usingPods = pods.filter(
      (p) => !controlPlane.includes(p) && (aliases.includes(p.metadata?.labels?.[LABELS.revision] ?? '') || injectedRevision(p) === revision),
    );
    descriptions.push({ ...description, namespaces: using.sort((a, b) => a.name.localeCompare(b.name)), pods: usingPods.map(summary).sort(byName) });
  }
  return descriptions;
}

/** The revision that injected the pod's sidecar, from its status annotation. */
function injectedRevision(pod: V1Pod): string | undefined {
  const status = pod.metadata?.annotations?.[ANNOTATIONS.status];
  if (status === undefined) return undefined;
  try {
    const revision = (JSON.parse(status) as { revision?: unknown }).revision;
    return typeof revision === 'string' ? revision : undefined;
  } catch {
    return undefined;
  }
}

/** A gateway's revision: its label, else its sidecar's, else the default revision's (a gateway installed without one). */
function podRevision(pod: V1Pod): string {
  return pod.metadata?.labels?.[LABELS.revision] ?? injectedRevision(pod) ?? 'default';
}

/** kubectl's (apimachinery's `HumanDuration`) rendering of an age. */
export function humanAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const pair = (a: number, unitA: string, b: number, unitB: string): string => (b === 0 ? `${a}${unitA}` : `${a}${unitA}${b}${unitB}`);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10) return pair(minutes, 'm', seconds % 60, 's');
  if (hours < 3) return `${minutes}m`;
  if (hours < 8) return pair(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return pair(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  return pair(Math.floor(days / 365), 'y', days % 365, 'd');
}
