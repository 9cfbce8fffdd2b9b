import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, errorMessage } from '../../runtime/index.js';
import { installedStateName, type MeshOperatorSpec } from '../../install/index.js';
import {
  alphaAnnotationAnalyzer,
  analysisMessage,
  buildSnapshot,
  formatMessage,
  isWarningOrWorse,
  runAnalyzers,
  sortedDeduped,
  type AnalysisMessage,
} from '../../analysis/index.js';
import { DAEMON_POD_SELECTOR, LABELS, revisionLabelValue } from '../../names/index.js';

/** The oldest Kubernetes minor version (1.x) the mesh installs on: the reference's `MinK8SVersion`. */
export const MIN_KUBERNETES_MINOR = 17;

/** What an installation creates, checked with a SelfSubjectAccessReview each (namespaced ones in the mesh namespace). */
export const INSTALL_RESOURCES: readonly { group: string; resource: string; namespaced: boolean }[] = [
  { group: '', resource: 'namespaces', namespaced: false },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespaced: false },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', namespaced: false },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', namespaced: false },
  { group: 'rbac.authorization.k8s.io', resource: 'roles', namespaced: true },
  { group: '', resource: 'serviceaccounts', namespaced: true },
  { group: '', resource: 'services', namespaced: true },
  { group: 'apps', resource: 'deployments', namespaced: true },
  { group: '', resource: 'configmaps', namespaced: true },
  { group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', namespaced: false },
  { group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations', namespaced: false },
];

export interface PrecheckOptions {
  /** `-r/--revision`; '' is `default`. */
  readonly revision: string;
  /** `-i/--meshNamespace`: where the control plane goes. */
  readonly meshNamespace: string;
  readonly skipControlPlane: boolean;
}

const CLUSTER = 'Cluster';

/** `x precheck`: the messages of every check, sorted and deduped. */
export async function precheck(kubeConfig: KubeConfig, options: PrecheckOptions): Promise<AnalysisMessage[]> {
  if (options.skipControlPlane) return [];
  const messages = [
    ...(await checkServerVersion(kubeConfig)),
    ...(await checkInstallPermissions(kubeConfig, options.meshNamespace)),
    ...(await checkRevision(kubeConfig, revisionLabelValue(options.revision))),
    ...(await checkAlphaAnnotations(kubeConfig, options.meshNamespace)),
  ];
  return sortedDeduped(messages);
}

/** As the reference's upgrade precheck: the alpha annotations (MSH0136) of the cluster's Namespaces, Services, Pods and Deployments. */
async function checkAlphaAnnotations(kubeConfig: KubeConfig, meshNamespace: string): Promise<AnalysisMessage[]> {
  const { AppsV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const lists = await Promise.all([
    core.listNamespace().then((l) => l.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Namespace' }))),
    core.listServiceForAllNamespaces().then((l) => l.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Service' }))),
    core.listPodForAllNamespaces().then((l) => l.items.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Pod' }))),
    kubeConfig
      .makeApiClient(AppsV1Api)
      .listDeploymentForAllNamespaces()
      .then((l) => l.items.map((o) => ({ ...o, apiVersion: 'apps/v1', kind: 'Deployment' }))),
  ]);
  const snapshot = buildSnapshot({
    objects: lists.flat().map((object) => ({ object })),
    complete: alphaAnnotationAnalyzer.inputs,
    rootNamespace: meshNamespace,
  });
  return [...runAnalyzers(snapshot, [alphaAnnotationAnalyzer]).messages];
}

async function checkServerVersion(kubeConfig: KubeConfig): Promise<AnalysisMessage[]> {
  const { VersionApi } = await import('@kubernetes/client-node');
  let info: { major: string; minor: string; gitVersion: string };
  try {
    info = await kubeConfig.makeApiClient(VersionApi).getCode();
  } catch (error) {
    throw new MeshError('precheck-issues', `failed to get the Kubernetes version: ${errorMessage(error)}`, { cause: error });
  }
  // Managed clusters report minors such as `17+`.
  const minor = Number.parseInt(info.minor, 10);
  if (info.major === '1' && Number.isInteger(minor) && minor >= MIN_KUBERNETES_MINOR) return [];
  if (Number.parseInt(info.major, 10) > 1) return [];
  return [
    analysisMessage(
      'UnsupportedKubernetesVersion',
      CLUSTER,
      `The Kubernetes Version "${info.gitVersion}" is lower than the minimum version: 1.${MIN_KUBERNETES_MINOR}`,
    ),
  ];
}

async function checkInstallPermissions(kubeConfig: KubeConfig, meshNamespace: string): Promise<AnalysisMessage[]> {
  const { AuthorizationV1Api } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(AuthorizationV1Api);
  const results = await Promise.all(
    INSTALL_RESOURCES.map(async ({ group, resource, namespaced }) => {
      let problem: string | undefined;
      try {
        const review = await api.createSelfSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { verb: 'create', group, version: 'v1', resource, ...(namespaced ? { namespace: meshNamespace } : {}) } },
          },
        });
        if (!review.status?.allowed) problem = review.status?.reason || 'permission denied';
      } catch (error) {
        problem = errorMessage(error);
      }
      return problem === undefined
        ? []
        : [analysisMessage('InsufficientPermissions', CLUSTER, `Missing required permission to create resource ${resource} (${problem})`)];
    }),
  );
  return results.flat();
}

interface InstallationRecord {
  metadata?: { name?: string; namespace?: string };
  spec?: MeshOperatorSpec;
}

/**
 * The revision about to be installed: an installation of it already recorded (an upgrade in place,
 * an info), or control-plane objects of it that no recorded installation owns, or a revision tag of
 * its name (both conflicts: the new webhooks would overlap the old ones).
 */
async function checkRevision(kubeConfig: KubeConfig, revision: string): Promise<AnalysisMessage[]> {
  const { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi } = await import('@kubernetes/client-node');
  const records = await kubeConfig
    .makeApiClient(CustomObjectsApi)
    .listClusterCustomObject({ group: 'install.mesh.io', version: 'v1alpha1', plural: 'meshoperators' })
    .then((list) => (list as { items?: InstallationRecord[] }).items ?? [])
    // Without the MeshOperator kind nothing was ever installed by meshctl.
    .catch(() => [] as InstallationRecord[]);
  const installed = records.filter(
    (r) => (r.spec?.revision || 'default') === revision || (r.metadata?.name === installedStateName(revision) && !r.spec?.revision),
  );
  const messages: AnalysisMessage[] = installed.map((record) => {
    const name = `${record.metadata?.name ?? ''}.${record.metadata?.namespace ?? ''}`;
    return analysisMessage(
      'ExistingInstallation',
      `MeshOperator ${name}`,
      `Mesh revision "${revision}" is already installed: installing it again changes this installation in place (meshctl upgrade shows the changes); to run a second control plane beside it, install with another --revision.`,
    );
  });
  const webhooks = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration({ labelSelector: LABELS.revision })).items;
  for (const tag of webhooks.filter((c) => c.metadata?.labels?.[LABELS.tag] === revision)) {
    messages.push(
      analysisMessage(
        'RevisionConflict',
        `MutatingWebhookConfiguration ${tag.metadata?.name ?? ''}`,
        `Revision "${revision}" is the name of an existing revision tag (of revision "${tag.metadata?.labels?.[LABELS.revision] ?? ''}"): the new revision's injection webhooks would select the same namespaces and pods. Remove the tag or install under another --revision.`,
      ),
    );
  }
  if (installed.length > 0) return messages;
  const unowned = webhooks
    .filter((c) => c.metadata?.labels?.[LABELS.revision] === revision && c.metadata.labels[LABELS.tag] === undefined)
    .map((c) => `MutatingWebhookConfiguration ${c.metadata?.name ?? ''}`);
  const pods = (
    await kubeConfig.makeApiClient(CoreV1Api).listPodForAllNamespaces({ labelSelector: `${DAEMON_POD_SELECTOR},${LABELS.revision}=${revision}` })
  ).items.map((p) => `Pod ${p.metadata?.name ?? ''}.${p.metadata?.namespace ?? ''}`);
  for (const origin of [...unowned, ...pods]) {
    messages.push(
      analysisMessage(
        'RevisionConflict',
        origin,
        `A control plane of revision "${revision}" is already running, but no installation of it is recorded (installed by another tool?): installing this revision would conflict with it. Uninstall it first, or install under another --revision.`,
      ),
    );
  }
  return messages;
}

export interface PrecheckReport {
  readonly stdout: string;
  readonly stderr: string;
  /** Set when warnings or worse were found: printed after the report, and the command fails. */
  readonly failure?: MeshError;
}

/** The reference's output: the messages on stdout, or the success text on stderr; warnings or worse fail. */
export function renderPrecheck(messages: readonly AnalysisMessage[]): PrecheckReport {
  if (messages.length === 0) {
    return {
      stdout: '',
      stderr: `✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!\n  To get started, check out ${GETTING_STARTED}\n`,
    };
  }
  const stdout = `${messages.map(formatMessage).join('\n')}\n`;
  if (!messages.some(isWarningOrWorse)) return { stdout, stderr: '' };
  const failure = new MeshError(
    'precheck-issues',
    `Issues found when checking the cluster. Mesh may not be safe to install or upgrade.\nSee ${ANALYSIS_MESSAGES} for more information about causes and resolutions.`,
  );
  return { stdout, stderr: '', failure };
}

/** Where users are pointed to: the project's README (it has no published site). */
const GETTING_STARTED = 'the README of the mesh project, section "Installing with meshctl"';
const ANALYSIS_MESSAGES = 'the README of the mesh project, section "Analysis messages",';
