import type { KubernetesObject } from '@kubernetes/client-node';
import type { ComponentName } from '../chart-values.js';
import type { ClusterObjects } from '../cluster-objects.js';

/** The reference's install status words. */
export type InstallStatusWord = 'RECONCILING' | 'HEALTHY' | 'ERROR';

/** `status` of a MeshOperator: the whole installation's, with a message on error, and each component's. */
export interface MeshOperatorStatus {
  status: InstallStatusWord;
  message?: string;
  componentStatus?: Partial<Record<ComponentName, { status: InstallStatusWord; message?: string }>>;
}

/** HEALTHY once every Deployment of the component has its ready replicas; else RECONCILING naming the ones waited on. */
export async function componentStatusOf(
  cluster: ClusterObjects,
  deployments: readonly KubernetesObject[],
): Promise<{ status: InstallStatusWord; message?: string }> {
  const waiting: string[] = [];
  for (const deployment of deployments) {
    const current = (await cluster.read(deployment)) as (KubernetesObject & { spec?: { replicas?: number }; status?: { readyReplicas?: number } }) | undefined;
    const want = current?.spec?.replicas ?? 1;
    const ready = current?.status?.readyReplicas ?? 0;
    if (ready < want) waiting.push(`Deployment ${deployment.metadata?.namespace ?? ''}/${deployment.metadata?.name ?? ''}: ${ready}/${want} replicas ready`);
  }
  return waiting.length === 0 ? { status: 'HEALTHY' } : { status: 'RECONCILING', message: waiting.join('; ') };
}
