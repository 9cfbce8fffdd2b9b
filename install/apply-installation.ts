import type { KubernetesObject } from '@kubernetes/client-node';
import { MeshError, errorMessage } from '../runtime/index.js';
import { installedStateName, type ComponentName } from './chart-values.js';
import { IGNORE_RECONCILE_ANNOTATION, INSTALLED_VERSION_ANNOTATION, LABELS, revisionLabelValue } from '../names/index.js';
import type { MeshOperator } from './mesh-operator.js';
import type { RenderedComponent } from './render.js';
import { INSTALLED_KINDS, objectKey, objectsOfManifest, type ClusterObjects } from './cluster-objects.js';

/** The reference's user-facing component names. */
export const COMPONENT_TITLES: Readonly<Record<ComponentName, string>> = {
  Base: 'Mesh core',
  Pilot: 'Meshd',
  IngressGateways: 'Ingress gateways',
  EgressGateways: 'Egress gateways',
};

export interface ApplyInstallationOptions {
  readonly cluster: ClusterObjects;
  /** In apply order (CRDs first). */
  readonly rendered: readonly RenderedComponent[];
  /** Recorded as `installed-state[-<revision>]` once everything is applied. */
  readonly config: MeshOperator;
  readonly dryRun: boolean;
  readonly readinessTimeoutMs: number;
  readonly progress: (line: string) => void;
  /** How long to wait between readiness checks; default 500 ms. */
  readonly pollMs?: number;
  /** meshctl's version, recorded on the installation for the next upgrade's eligibility check. */
  readonly version?: string;
  /** Whether to record the configuration as `installed-state[-<revision>]`; default true. The operator's resource is its own record. */
  readonly record?: boolean;
  /** Whether each component's Deployments must be ready before the next; default true. The operator reports readiness in its status instead. */
  readonly waitForDeployments?: boolean;
  readonly observer?: ApplyObserver;
}

/** Hooks for the install operator: what it skips, applies and prunes. */
export interface ApplyObserver {
  /** Whether to apply this object (default: every one); the operator skips what it applied unchanged. */
  shouldApply?(object: KubernetesObject): boolean;
  applied?(object: KubernetesObject): void;
  pruned?(object: KubernetesObject): void;
}

/**
 * `meshctl install`: every component's objects by server-side apply in order, the CRDs established
 * before anything uses them, each component's Deployments ready before the next component (up to
 * `--readiness-timeout`, naming the blocking pod and its reason), then what the new manifests no
 * longer hold pruned by the installer labels, and the configuration recorded in the cluster.
 */
export async function applyInstallation(options: ApplyInstallationOptions): Promise<void> {
  const { cluster, dryRun, progress } = options;
  const spec = options.config.spec ?? {};
  const revision = spec.revision ?? '';
  const owner = options.config.metadata?.name ?? installedStateName(revision);
  const applied = new Set<string>();
  for (const component of options.rendered) {
    const objects = objectsOfManifest(component.manifest);
    for (const object of objects) {
      applied.add(objectKey(object));
      if (options.observer?.shouldApply?.(object) === false) continue;
      try {
        await cluster.apply(object, dryRun);
      } catch (error) {
        throw new MeshError(
          'install-failed',
          `✘ ${COMPONENT_TITLES[component.component]} encountered an error: failed to apply ${objectKey(object)}: ${describe(error)}`,
          { cause: error },
        );
      }
      options.observer?.applied?.(object);
    }
    if (!dryRun) {
      await waitFor(
        objects.filter((o) => o.kind === 'CustomResourceDefinition'),
        (crd) => crdEstablished(cluster, crd),
        options,
        component.component,
      );
      if (options.waitForDeployments !== false)
        await waitFor(
          objects.filter((o) => o.kind === 'Deployment'),
          (deployment) => deploymentReady(deployment),
          options,
          component.component,
        );
    }
    progress(`✔ ${COMPONENT_TITLES[component.component]} installed`);
  }
  if (!dryRun) await prune(cluster, owner, revision, applied, progress, options.observer);
  if (!dryRun && options.record !== false) {
    const namespace = spec.namespace ?? 'mesh-system';
    await cluster.apply(
      {
        ...options.config,
        metadata: {
          name: installedStateName(revision),
          namespace,
          labels: { [LABELS.revision]: revisionLabelValue(revision), [LABELS.partOf]: 'mesh' },
          annotations: { [IGNORE_RECONCILE_ANNOTATION]: 'true', ...(options.version ? { [INSTALLED_VERSION_ANNOTATION]: options.version } : {}) },
        },
      } as KubernetesObject,
      false,
    );
  }
  progress('✔ Installation complete');

  async function deploymentReady(deployment: KubernetesObject): Promise<string | undefined> {
    const current = (await cluster.read(deployment)) as
      | (KubernetesObject & { spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } }; status?: { readyReplicas?: number } })
      | undefined;
    const want = current?.spec?.replicas ?? 1;
    if ((current?.status?.readyReplicas ?? 0) >= want) return undefined;
    const selector = Object.entries(current?.spec?.selector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = (await cluster.list('v1', 'Pod', selector)).filter(
      (pod) => pod.metadata?.namespace === deployment.metadata?.namespace,
    ) as (KubernetesObject & {
      status?: {
        phase?: string;
        containerStatuses?: { state?: { waiting?: { reason?: string } } }[];
        conditions?: { type: string; status: string; reason?: string }[];
      };
    })[];
    const blocking = pods.map((pod) => {
      const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting?.reason)?.state?.waiting?.reason;
      const condition = pod.status?.conditions?.find((c) => c.status !== 'True');
      return `Pod/${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}: ${waiting ?? condition?.reason ?? condition?.type ?? pod.status?.phase ?? 'Pending'}`;
    });
    return `Deployment/${deployment.metadata?.namespace ?? ''}/${deployment.metadata?.name ?? ''}${blocking.length > 0 ? ` (${blocking.join(', ')})` : ' (no pod)'}`;
  }
}

async function crdEstablished(cluster: ClusterObjects, crd: KubernetesObject): Promise<string | undefined> {
  const current = (await cluster.read(crd)) as (KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }) | undefined;
  return current?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? undefined : `${objectKey(crd)} not established`;
}

/** Resolves once every CRD among `objects` is Established; throws naming the ones that are not after `timeoutMs`. */
export async function waitUntilEstablished(cluster: ClusterObjects, objects: readonly KubernetesObject[], timeoutMs: number, pollMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = (await Promise.all(objects.filter((o) => o.kind === 'CustomResourceDefinition').map((crd) => crdEstablished(cluster, crd)))).filter(
      (reason) => reason !== undefined,
    );
    if (waiting.length === 0) return;
    if (Date.now() >= deadline) throw new MeshError('install-failed', `timed out waiting for ${waiting.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function waitFor(
  objects: readonly KubernetesObject[],
  check: (object: KubernetesObject) => Promise<string | undefined>,
  options: ApplyInstallationOptions,
  component: ComponentName,
): Promise<void> {
  const deadline = Date.now() + options.readinessTimeoutMs;
  for (;;) {
    let waiting: string[];
    try {
      waiting = (await Promise.all(objects.map(check))).filter((reason): reason is string => reason !== undefined);
    } catch (error) {
      throw new MeshError('install-failed', `✘ ${COMPONENT_TITLES[component]} encountered an error: failed to wait for resource: ${describe(error)}`, {
        cause: error,
      });
    }
    if (waiting.length === 0) return;
    if (Date.now() >= deadline) {
      throw new MeshError(
        'install-failed',
        `✘ ${COMPONENT_TITLES[component]} encountered an error: failed to wait for resource: resources not ready after ${formatDuration(options.readinessTimeoutMs)}: timed out waiting for the condition\n${waiting.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
}

async function prune(
  cluster: ClusterObjects,
  owner: string,
  revision: string,
  applied: ReadonlySet<string>,
  progress: (line: string) => void,
  observer: ApplyObserver | undefined,
): Promise<void> {
  const selector = `${LABELS.operatorOwner}=${owner},${LABELS.revision}=${revisionLabelValue(revision)}`;
  for (const { apiVersion, kind } of INSTALLED_KINDS) {
    for (const object of await cluster.list(apiVersion, kind, selector)) {
      if (applied.has(objectKey(object))) continue;
      await cluster.remove(object, false);
      observer?.pruned?.(object);
      progress(`  Removed ${objectKey(object)}.`);
    }
  }
}

function formatDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes > 0 ? `${minutes}m` : ''}${seconds}s`;
}

function describe(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  return errorMessage(error);
}
