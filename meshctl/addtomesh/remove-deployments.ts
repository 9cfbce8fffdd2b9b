import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
import { ANNOTATIONS, IGNORED_NAMESPACES, PROXY_CONTAINER } from '../../names/index.js';
import { MeshError } from '../../runtime/index.js';
import { uninjectPod, type Pod } from '../../webhook/inject/index.js';
import {
  deploymentName,
  deploymentsOfService,
  noDeploymentsLine,
  podTemplateOf,
  readDeployment,
  replacePodTemplate,
  updateEach,
  type MeshWorkloadTarget,
  type WorkloadIo,
} from './mesh-deployments.js';

/** `x remove-from-mesh deployment|service <name>`. */
export interface RemoveFromMeshRequest extends MeshWorkloadTarget {
  readonly meshNamespace: string;
}

/**
 * `x remove-from-mesh deployment <name>`: takes the sidecar out of the Deployment's pod template
 * (what injection added, as its status annotation lists it: containers, init containers, volumes,
 * the app's probes, the labels and annotations) and marks it `sidecar.mesh.io/inject: "false"` so
 * that namespace injection does not put it back; the update restarts the pods.
 */
export async function removeDeploymentFromMesh(kubeConfig: KubeConfig, request: RemoveFromMeshRequest, io: WorkloadIo): Promise<void> {
  refuseSystemNamespace(request);
  const deployment = await readDeployment(kubeConfig, request);
  await updateEach([deployment], (each) => uninjectDeployment(kubeConfig, each, request, io));
}

/** `x remove-from-mesh service <name>`: the same for each Deployment of the Service; none is not an error. */
export async function removeServiceFromMesh(kubeConfig: KubeConfig, request: RemoveFromMeshRequest, io: WorkloadIo): Promise<void> {
  refuseSystemNamespace(request);
  const deployments = await deploymentsOfService(kubeConfig, request).catch((error: unknown) => {
    throw new MeshError('mesh-workload-not-found', `service "${request.name}" does not exist, skip`, { cause: error });
  });
  if (deployments.length === 0) return io.stdout(noDeploymentsLine(request));
  await updateEach(deployments, (deployment) => uninjectDeployment(kubeConfig, deployment, request, io));
}

/** The cluster's namespaces and the mesh's own hold no injected workload, as the reference says. */
function refuseSystemNamespace(request: RemoveFromMeshRequest): void {
  if (IGNORED_NAMESPACES.includes(request.namespace) || request.namespace === request.meshNamespace) {
    throw new MeshError('mesh-system-namespace', `namespace ${request.namespace} is a system namespace and has no mesh sidecar injected`);
  }
}

/**
 * One Deployment. Without the proxy container and already marked not to be injected, it is
 * skipped; otherwise (also without a sidecar, as the reference does) it is uninjected and marked.
 */
async function uninjectDeployment(kubeConfig: KubeConfig, deployment: V1Deployment, service: MeshWorkloadTarget, io: WorkloadIo): Promise<void> {
  const name = deploymentName(deployment);
  const template = podTemplateOf(deployment);
  const hasProxy = (deployment.spec?.template.spec?.containers ?? []).some((container) => container.name === PROXY_CONTAINER);
  const optedOut = deployment.spec?.template.metadata?.annotations?.[ANNOTATIONS.inject]?.toLowerCase() === 'false';
  if (!hasProxy && optedOut) return io.stdout(`deployment "${name}" has no mesh sidecar injected. Skipping.\n`);
  const restored: Pod = uninjectPod(template);
  const metadata = (restored['metadata'] ??= {}) as { annotations?: Record<string, string> };
  metadata.annotations = { ...metadata.annotations, [ANNOTATIONS.inject]: 'false' };
  await replacePodTemplate(
    kubeConfig,
    deployment,
    restored,
    (cause) => `failed to update deployment "${name}" for service "${service.name}.${service.namespace}" due to ${cause}`,
  );
  io.stdout(`deployment "${name}" updated successfully with mesh sidecar un-injected.\n`);
}
