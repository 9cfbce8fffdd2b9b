import type { KubeConfig, V1Deployment } from '@kubernetes/client-node';
import { ANNOTATIONS, revisionLabelValue } from '../../names/index.js';
import { MeshError, errorMessage } from '../../runtime/index.js';
import { compileInjector, kubeInjectTemplate, type InjectPodTemplate, type Pod } from '../../webhook/inject/index.js';
import { resolveInjectSources, type InjectSourceFlags } from '../inject/inject-sources.js';
import {
  DEPLOYMENT_REQUIREMENTS_URL,
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

/** `x add-to-mesh deployment|service <name>`: the target, the Inject group of flags and `--revision`. */
export interface AddToMeshRequest extends MeshWorkloadTarget {
  readonly meshNamespace: string;
  readonly flags: InjectSourceFlags;
}

/**
 * `x add-to-mesh deployment <name>`: injects the sidecar into the Deployment's pod template with
 * the revision's injector config and mesh config (as `orch-inject` renders them from the
 * ConfigMaps or files) and updates the Deployment, which restarts its pods.
 */
export async function addDeploymentToMesh(kubeConfig: KubeConfig, request: AddToMeshRequest, io: WorkloadIo): Promise<void> {
  const inject = await templateInjector(kubeConfig, request, io);
  const deployment = await readDeployment(kubeConfig, request);
  await injectDeployment(kubeConfig, deployment, inject, request, io);
}

/** `x add-to-mesh service <name>`: the same for each Deployment of the Service; none is not an error. */
export async function addServiceToMesh(kubeConfig: KubeConfig, request: AddToMeshRequest, io: WorkloadIo): Promise<void> {
  const inject = await templateInjector(kubeConfig, request, io);
  const deployments = await deploymentsOfService(kubeConfig, request);
  if (deployments.length === 0) return io.stdout(noDeploymentsLine(request));
  await updateEach(deployments, (deployment) => injectDeployment(kubeConfig, deployment, inject, request, io));
}

async function templateInjector(kubeConfig: KubeConfig, request: AddToMeshRequest, io: WorkloadIo): Promise<InjectPodTemplate> {
  const sources = await resolveInjectSources(request.flags, { kubeConfig, meshNamespace: request.meshNamespace, warn: io.stderr });
  return kubeInjectTemplate(compileInjector(sources.config), { meshConfig: sources.meshConfig, revision: revisionLabelValue(request.flags.revision) });
}

/**
 * One Deployment. A template kube-inject skips (already injected, host network, injection
 * disabled) is left as it is, with the skip message on stderr, and reported updated as the
 * reference does.
 */
async function injectDeployment(kubeConfig: KubeConfig, deployment: V1Deployment, inject: InjectPodTemplate, service: MeshWorkloadTarget, io: WorkloadIo) {
  const name = deploymentName(deployment);
  const serviceName = `${service.name}.${service.namespace}`;
  const owner = { name: deployment.metadata?.name ?? '', namespace: deployment.metadata?.namespace ?? '', kind: 'Deployment', apiVersion: 'apps/v1' };
  let result;
  try {
    result = inject(withoutOptOutOfRemoval(podTemplateOf(deployment)), owner);
  } catch (error) {
    throw new MeshError(
      'mesh-workload-update-failed',
      `failed to inject sidecar to deployment resource ${name} for service ${serviceName} due to ${errorMessage(error)}`,
      { cause: error },
    );
  }
  if ('skipped' in result) io.stderr(result.skipped);
  else
    await replacePodTemplate(
      kubeConfig,
      deployment,
      result.injected,
      (cause) => `failed to update deployment ${name} for service ${serviceName} due to ${cause}`,
    );
  io.stdout(
    `deployment ${name} updated successfully with mesh sidecar injected.\nNext Step: Add related labels to the deployment to align with the mesh's requirement: ${DEPLOYMENT_REQUIREMENTS_URL}\n`,
  );
}

/**
 * remove-from-mesh leaves `sidecar.mesh.io/inject: "false"` on the template so that namespace
 * injection does not put the sidecar back; an explicit add-to-mesh overrides it (the reference
 * skips such a template as "injection disabled", so that add after remove never worked there).
 */
function withoutOptOutOfRemoval(template: Pod): Pod {
  const annotations = (template['metadata'] as { annotations?: Record<string, string> } | undefined)?.annotations;
  if (annotations?.[ANNOTATIONS.inject]?.toLowerCase() === 'false') {
    delete annotations[ANNOTATIONS.inject];
    if (Object.keys(annotations).length === 0) delete (template['metadata'] as { annotations?: unknown }).annotations;
  }
  return template;
}
