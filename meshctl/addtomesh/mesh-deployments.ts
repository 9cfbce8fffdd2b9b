import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
import { MeshError, errorMessage } from '../../runtime/index.js';
import type { Pod } from '../../webhook/inject/index.js';
import { kubeMessage } from '../kube/port-forward.js';

/** Where add-to-mesh sends its users next, as the reference does. */
export const DEPLOYMENT_REQUIREMENTS_URL = 'https://mesh.io/latest/docs/ops/deployment/requirements/';

export interface WorkloadIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** What `x add-to-mesh` and `x remove-from-mesh` act on: a Deployment, or the Deployments of a Service. */
export interface MeshWorkloadTarget {
  readonly namespace: string;
  readonly name: string;
}

/** The Deployment, or the reference's error for any failure to read it. */
export async function readDeployment(kubeConfig: KubeConfig, target: MeshWorkloadTarget): Promise<V1Deployment> {
  const { AppsV1Api } = await import('@kubernetes/client-node');
  try {
    return await kubeConfig.makeApiClient(AppsV1Api).readNamespacedDeployment(target);
  } catch (error) {
    throw new MeshError('mesh-workload-not-found', `deployment "${target.name}" does not exist`, { cause: error });
  }
}

/**
 * The Deployments of a Service as the reference finds them: those whose `spec.selector.matchLabels`
 * carry every pair of the Service's selector (a Service without a selector has none). Pods are not
 * consulted. A missing Service is the API server's error.
 */
export async function deploymentsOfService(kubeConfig: KubeConfig, target: MeshWorkloadTarget): Promise<V1Deployment[]> {
  const { AppsV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  let selector: Record<string, string>;
  try {
    selector = (await kubeConfig.makeApiClient(CoreV1Api).readNamespacedService(target)).spec?.selector ?? {};
  } catch (error) {
    throw new MeshError('mesh-workload-not-found', kubeMessage(error), { cause: error });
  }
  const pairs = Object.entries(selector);
  if (pairs.length === 0) return [];
  const deployments = await kubeConfig.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: target.namespace });
  return deployments.items.filter((deployment) => {
    const matchLabels = deployment.spec?.selector.matchLabels ?? {};
    return pairs.every(([key, value]) => matchLabels[key] === value);
  });
}

/** The reference's line when a Service selects no Deployment (not an error). */
export function noDeploymentsLine(target: MeshWorkloadTarget): string {
  return `No deployments found for service ${target.name}.${target.namespace}\n`;
}

/** The Deployment's pod template as plain JSON, the injector's input. */
export function podTemplateOf(deployment: V1Deployment): Pod {
  return JSON.parse(JSON.stringify(deployment.spec?.template ?? {})) as Pod;
}

/** `<name>.<namespace>`, as the messages name a Deployment. */
export function deploymentName(deployment: V1Deployment): string {
  return `${deployment.metadata?.name ?? ''}.${deployment.metadata?.namespace ?? ''}`;
}

/**
 * Writes the Deployment back with its new pod template (an update, so a concurrent change fails
 * it): the Deployment controller then rolls its pods. `failure` words the error.
 */
export async function replacePodTemplate(kubeConfig: KubeConfig, deployment: V1Deployment, template: Pod, failure: (cause: string) => string): Promise<void> {
  const { AppsV1Api } = await import('@kubernetes/client-node');
  const body: V1Deployment = { ...deployment, spec: { ...(deployment.spec ?? { selector: {}, template: {} }), template } };
  try {
    await kubeConfig
      .makeApiClient(AppsV1Api)
      .replaceNamespacedDeployment({ name: deployment.metadata?.name ?? '', namespace: deployment.metadata?.namespace ?? '', body });
  } catch (error) {
    throw new MeshError('mesh-workload-update-failed', failure(kubeMessage(error)), { cause: error });
  }
}

/**
 * Runs `update` for every Deployment, as the reference does: one failing does not stop the others;
 * the failures, one a line, are the error at the end.
 */
export async function updateEach(deployments: readonly V1Deployment[], update: (deployment: V1Deployment) => Promise<void>): Promise<void> {
  const failures: string[] = [];
  for (const deployment of deployments) {
    try {
      await update(deployment);
    } catch (error) {
      failures.push(errorMessage(error));
    }
  }
  if (failures.length > 0) throw new MeshError('mesh-workload-update-failed', failures.join('\n'));
}
