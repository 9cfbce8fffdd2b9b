import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { KINDS, KIND_NAMES } from '../../crds/index.js';
import type { KubeApi } from '../kube/kube-client.js';
import { kubeMessage } from '../kube/port-forward.js';
import { MeshError } from '../../runtime/index.js';

/** The namespaced kinds dumped per selected namespace, as `kubectl get -o yaml` lists them. */
export const NAMESPACED_KINDS: readonly { apiVersion: string; kind: string; file: string }[] = [
  { apiVersion: 'v1', kind: 'Pod', file: 'pods' },
  { apiVersion: 'v1', kind: 'Service', file: 'services' },
  { apiVersion: 'v1', kind: 'Endpoints', file: 'endpoints' },
  { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', file: 'endpointslices' },
  { apiVersion: 'apps/v1', kind: 'Deployment', file: 'deployments' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', file: 'statefulsets' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', file: 'daemonsets' },
  { apiVersion: 'v1', kind: 'ConfigMap', file: 'configmaps' },
  { apiVersion: 'v1', kind: 'ServiceAccount', file: 'serviceaccounts' },
];

/** The cluster-scoped kinds dumped once. */
export const CLUSTER_KINDS: readonly { apiVersion: string; kind: string; file: string }[] = [
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', file: 'mutatingwebhookconfigurations' },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', file: 'validatingwebhookconfigurations' },
  { apiVersion: 'v1', kind: 'Node', file: 'nodes' },
];

/** The mesh's own kinds (the custom resources users apply). */
export const MESH_KINDS = KIND_NAMES.map((name) => ({ apiVersion: `${KINDS[name].group}/${KINDS[name].version}`, kind: name, file: KINDS[name].plural }));

/** One piece of the cluster's state: where it goes in the archive and how to read it. */
export interface ClusterTarget {
  /** What it is part of, for progress: a namespace's name, or `cluster-wide`. */
  readonly group: string;
  readonly path: string;
  readonly what: string;
  read(): Promise<string>;
}

/**
 * What `cluster/` holds for the selected namespaces: each kind's objects as YAML (managed fields
 * left out), the mesh's custom resources, secrets by name and type only (values only with
 * `--full-secrets`), events; once: the webhook configurations, the nodes, the kubeconfig context
 * (its name and server, never credentials) and the API server's version.
 */
export function clusterTargets(k8s: KubeApi, kubeConfig: KubeConfig, namespaces: readonly string[], fullSecrets: boolean): ClusterTarget[] {
  const objects = kubeConfig.makeApiClient(k8s.KubernetesObjectApi);
  const list = async (apiVersion: string, kind: string, namespace?: string): Promise<KubernetesObject[]> => {
    try {
      const items = (await objects.list(apiVersion, kind, namespace)).items;
      return items.map((item) => ({ ...item, apiVersion, kind }));
    } catch (error) {
      throw new MeshError('bugreport-gather-failed', `listing ${kind}${namespace ? ` in ${namespace}` : ''}: ${kubeMessage(error)}`, { cause: error });
    }
  };
  const yamlOf = (items: readonly KubernetesObject[]): string => stringify({ apiVersion: 'v1', kind: 'List', items: items.map(withoutManagedFields) });
  const targets: ClusterTarget[] = [];
  for (const namespace of namespaces) {
    for (const { apiVersion, kind, file } of NAMESPACED_KINDS) {
      targets.push({
        group: namespace,
        path: `cluster/k8s-resources/${namespace}/${file}.yaml`,
        what: `${file} in ${namespace}`,
        read: async () => yamlOf(await list(apiVersion, kind, namespace)),
      });
    }
    for (const { apiVersion, kind, file } of MESH_KINDS) {
      targets.push({
        group: namespace,
        path: `cluster/crs/${namespace}/${file}.yaml`,
        what: `${file} in ${namespace}`,
        read: async () => yamlOf(await list(apiVersion, kind, namespace)),
      });
    }
    targets.push({
      group: namespace,
      path: `cluster/secrets/${namespace}.yaml`,
      what: `secrets in ${namespace}`,
      read: async () => {
        const secrets = await list('v1', 'Secret', namespace);
        return fullSecrets ? yamlOf(secrets) : stringify(secrets.map(secretSummary));
      },
    });
    targets.push({
      group: namespace,
      path: `cluster/events/${namespace}.yaml`,
      what: `events in ${namespace}`,
      read: async () => yamlOf(await list('v1', 'Event', namespace)),
    });
  }
  for (const { apiVersion, kind, file } of CLUSTER_KINDS) {
    targets.push({ group: 'cluster-wide', path: `cluster/k8s-resources/${file}.yaml`, what: file, read: async () => yamlOf(await list(apiVersion, kind)) });
  }
  targets.push({ group: 'cluster-wide', path: 'cluster/cluster-context', what: 'cluster context', read: async () => clusterContext(kubeConfig) });
  targets.push({
    group: 'cluster-wide',
    path: 'cluster/version',
    what: 'API server version',
    read: async () => {
      try {
        return stringify(await kubeConfig.makeApiClient(k8s.VersionApi).getCode());
      } catch (error) {
        throw new MeshError('bugreport-gather-failed', `reading the API server version: ${kubeMessage(error)}`, { cause: error });
      }
    },
  });
  return targets;
}

/** The kubeconfig's current context, cluster and server; no user, token, key or certificate. */
export function clusterContext(kubeConfig: KubeConfig): string {
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  const cluster = kubeConfig.getCurrentCluster();
  return stringify({
    context: kubeConfig.getCurrentContext(),
    cluster: cluster?.name ?? '',
    server: cluster?.server ?? '',
    namespace: context?.namespace ?? '',
  });
}

/**
 * A secret as the archive shows it without `--full-secrets`: its name, namespace and type; not its
 * data, nor its annotations (`kubectl apply` copies the values into last-applied-configuration).
 */
function secretSummary(secret: KubernetesObject): { name: string; namespace: string; type: string } {
  return { name: secret.metadata?.name ?? '', namespace: secret.metadata?.namespace ?? '', type: (secret as { type?: string }).type ?? '' };
}

function withoutManagedFields(object: KubernetesObject): KubernetesObject {
  if (!object.metadata) return object;
  const { managedFields: _managed, ...metadata } = object.metadata;
  return { ...object, metadata };
}
