import type { KubernetesObject } from '@kubernetes/client-node';
import type { RenderedComponent } from '../../install/index.js';
import { objectsOfManifest, type ClusterObjects } from '../../install/index.js';

/**
 * `meshctl verify-install`: every object the installation renders exists, every Deployment is
 * ready; one line per object, then a summary. Returns the report and whether it all checked out.
 */
export async function verifyInstallation(cluster: ClusterObjects, rendered: readonly RenderedComponent[]): Promise<{ report: string; ok: boolean }> {
  const lines: string[] = [];
  let failures = 0;
  let crds = 0;
  let deployments = 0;
  for (const object of rendered.flatMap((component) => objectsOfManifest(component.manifest))) {
    const name = `${object.kind ?? ''}: ${object.metadata?.name ?? ''}.${object.metadata?.namespace ?? ''}`;
    const current = await cluster.read(object);
    if (!current) {
      failures++;
      lines.push(`✘ ${name} not found`);
      continue;
    }
    if (object.kind === 'CustomResourceDefinition') crds++;
    if (object.kind === 'Deployment') {
      deployments++;
      const problem = deploymentProblem(current);
      if (problem) {
        failures++;
        lines.push(`✘ ${name} ${problem}`);
        continue;
      }
    }
    lines.push(`✔ ${name} checked successfully`);
  }
  lines.push(`Checked ${crds} custom resource definitions`, `Checked ${deployments} mesh Deployments`);
  lines.push(
    failures === 0 ? '✔ Mesh is installed and verified successfully' : `✘ Mesh is not installed correctly: ${failures} ${failures === 1 ? 'error' : 'errors'}`,
  );
  return { report: `${lines.join('\n')}\n`, ok: failures === 0 };
}

function deploymentProblem(deployment: KubernetesObject): string | undefined {
  const { spec, status } = deployment as KubernetesObject & { spec?: { replicas?: number }; status?: { readyReplicas?: number } };
  const want = spec?.replicas ?? 1;
  const ready = status?.readyReplicas ?? 0;
  return ready >= want ? undefined : `not ready: ${ready}/${want} replicas`;
}
