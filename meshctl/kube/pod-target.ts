import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { MeshError, UsageError } from '../../runtime/index.js';

const POD_TYPES = new Set(['pod', 'pods', 'po']);
const DEPLOYMENT_TYPES = new Set(['deployment', 'deployments', 'deploy']);
const SERVICE_TYPES = new Set(['service', 'services', 'svc']);

/** The namespace commands work in: `-n`, else the kubeconfig context's, else `default`. */
export function namespaceOf(kubeConfig: KubeConfig, flag: string): string {
  if (flag !== '') return flag;
  return kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
}

/**
 * The pod a `[<type>/]<name>[.<namespace>]` target names, as the reference resolves it: a pod by
 * name, or a running pod of a Deployment or a Service; any other type does not refer to a pod.
 */
export async function resolvePodTarget(
  kubeConfig: KubeConfig,
  target: string,
  defaultNamespace: string,
): Promise<{ name: string; namespace: string; pod: V1Pod }> {
  const slash = target.indexOf('/');
  const type = slash >= 0 ? target.slice(0, slash).toLowerCase() : 'pod';
  const rest = slash >= 0 ? target.slice(slash + 1) : target;
  const dot = rest.indexOf('.');
  const name = dot >= 0 ? rest.slice(0, dot) : rest;
  const namespace = dot >= 0 ? rest.slice(dot + 1) : defaultNamespace;
  if (name === '') throw new UsageError(`"${target}": no name`, { exitCode: 64 });
  const { AppsV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(CoreV1Api);
  if (POD_TYPES.has(type)) {
    try {
      return { name, namespace, pod: await core.readNamespacedPod({ name, namespace }) };
    } catch (error) {
      if ((error as { code?: number }).code === 404) throw new MeshError('pod-not-found', `unable to retrieve Pod: pods "${name}" not found`);
      throw error;
    }
  }
  let selector: Record<string, string> | undefined;
  if (DEPLOYMENT_TYPES.has(type)) {
    const deployment = await kubeConfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name, namespace })
      .catch(() => undefined);
    if (!deployment) throw new MeshError('pod-not-found', `deployments.apps "${name}" not found`);
    selector = deployment.spec?.selector.matchLabels;
  } else if (SERVICE_TYPES.has(type)) {
    const service = await core.readNamespacedService({ name, namespace }).catch(() => undefined);
    if (!service) throw new MeshError('pod-not-found', `services "${name}" not found`);
    selector = service.spec?.selector;
  } else {
    throw new UsageError(`"${target.split('.')[0] ?? target}" does not refer to a pod`, { exitCode: 64 });
  }
  const labelSelector = Object.entries(selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const pods = (await core.listNamespacedPod({ namespace, labelSelector })).items.filter((pod) => pod.status?.phase === 'Running');
  const pod = pods.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))[0];
  if (!pod) throw new MeshError('pod-not-found', `no running pod for ${type}/${name} in namespace ${namespace}`);
  return { name: pod.metadata?.name ?? '', namespace, pod };
}

/** The running pods a label selector picks in a namespace (`-l`), by name. */
export async function podsBySelector(
  kubeConfig: KubeConfig,
  namespace: string,
  labelSelector: string,
): Promise<{ name: string; namespace: string; pod: V1Pod }[]> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const pods = (await kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector })).items.filter(
    (pod) => pod.status?.phase === 'Running',
  );
  if (pods.length === 0) throw new MeshError('pod-not-found', `no running pods match the selector "${labelSelector}" in namespace ${namespace}`);
  return pods.map((pod) => ({ name: pod.metadata?.name ?? '', namespace, pod })).sort((a, b) => a.name.localeCompare(b.name));
}
