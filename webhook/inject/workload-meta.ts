import { objectList, stringMap, type Pod } from './pod.js';

/** The workload that owns a pod, as the reference names it in MESH_META_WORKLOAD_NAME and _OWNER. */
export interface WorkloadMeta {
  readonly name: string;
  readonly namespace: string;
  readonly kind: string;
  readonly apiVersion: string;
}

const CRON_JOB_RUN = /^(.+)-\d{8,10}$/;

/**
 * The pod's controller, one level up where the reference looks through it: a ReplicaSet named
 * `<deployment>-<pod-template-hash>` is its Deployment, a Job named `<cronjob>-<schedule time>` its
 * CronJob. A pod without a controller is its own workload.
 */
export function workloadMetaOf(pod: Pod, namespace: string): WorkloadMeta {
  const metadata = (pod['metadata'] ?? {}) as Record<string, unknown>;
  const podName = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : generatedPrefix(metadata['generateName']);
  const controller = objectList(metadata, 'ownerReferences').find((ref) => ref['controller'] === true);
  if (!controller) return { name: podName, namespace, kind: 'Pod', apiVersion: 'v1' };
  const name = String(controller['name'] ?? '');
  const kind = String(controller['kind'] ?? '');
  const apiVersion = String(controller['apiVersion'] ?? '');
  const labels = stringMap(metadata['labels']);
  if (kind === 'ReplicaSet') {
    const hash = labels['pod-template-hash'];
    if (hash !== undefined && name.endsWith(`-${hash}`))
      return { name: name.slice(0, -(hash.length + 1)), namespace, kind: 'Deployment', apiVersion: 'apps/v1' };
  }
  if (kind === 'ReplicationController') {
    const deploymentConfig = labels['deploymentconfig'];
    if (deploymentConfig !== undefined && deploymentConfig !== '')
      return { name: deploymentConfig, namespace, kind: 'DeploymentConfig', apiVersion: 'apps.openshift.io/v1' };
  }
  if (kind === 'Job') {
    const run = CRON_JOB_RUN.exec(name);
    if (run) return { name: run[1] as string, namespace, kind: 'CronJob', apiVersion: 'batch/v1' };
  }
  return { name, namespace, kind, apiVersion };
}

function generatedPrefix(generateName: unknown): string {
  return typeof generateName === 'string' ? generateName.replace(/-$/, '') : '';
}

/** `service.mesh.io/canonical-name` when the pod has none: the app name labels, else the workload. */
export function derivedCanonicalName(labels: Readonly<Record<string, string>>, workload: WorkloadMeta): string {
  return nonEmpty(labels['app.kubernetes.io/name']) ?? nonEmpty(labels['app']) ?? workload.name;
}

/** `service.mesh.io/canonical-revision` when the pod has none: the version labels, else `latest`. */
export function derivedCanonicalRevision(labels: Readonly<Record<string, string>>): string {
  return nonEmpty(labels['app.kubernetes.io/version']) ?? nonEmpty(labels['version']) ?? 'latest';
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
