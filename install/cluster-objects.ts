import type { KubeConfig, KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';

/** The kinds the charts install, namespaced or not: what prune, verify and uninstall look at. */
export const INSTALLED_KINDS: readonly { apiVersion: string; kind: string; namespaced: boolean }[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', namespaced: true },
  { apiVersion: 'v1', kind: 'Service', namespaced: true },
  { apiVersion: 'v1', kind: 'ServiceAccount', namespaced: true },
  { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespaced: true },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespaced: true },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', namespaced: false },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', namespaced: false },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', namespaced: false },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  { apiVersion: 'install.mesh.io/v1alpha1', kind: 'MeshOperator', namespaced: true },
];

/** The objects of a manifest, in order. */
export function objectsOfManifest(manifest: string): KubernetesObject[] {
  return parseAllDocuments(manifest)
    .map((document) => document.toJS() as KubernetesObject | null)
    .filter((object): object is KubernetesObject => object !== null && typeof object === 'object' && typeof object.kind === 'string');
}

/** `Kind:namespace:name`, the reference's way of naming an object in install output. */
export function objectKey(object: KubernetesObject): string {
  return `${object.kind ?? ''}:${object.metadata?.namespace ?? ''}:${object.metadata?.name ?? ''}`;
}

/** What the install commands ask of the API server. */
export interface ClusterObjects {
  apply(object: KubernetesObject, dryRun: boolean): Promise<KubernetesObject>;
  read(object: KubernetesObject): Promise<KubernetesObject | undefined>;
  list(apiVersion: string, kind: string, labelSelector: string): Promise<KubernetesObject[]>;
  remove(object: KubernetesObject, dryRun: boolean): Promise<void>;
}

/** Server-side apply as `fieldManager` (forcing its field ownership), reads, lists by label and deletes, through client-node. */
export function clusterObjectsOf(kubeConfig: KubeConfig, fieldManager = 'meshctl'): ClusterObjects {
  // client-node is loaded with the first request (the offline install commands never load it).
  let loaded: KubernetesObjectApi | undefined;
  const objectApi = async (): Promise<KubernetesObjectApi> => {
    const { KubernetesObjectApi } = await import('@kubernetes/client-node');
    return (loaded ??= KubernetesObjectApi.makeApiClient(kubeConfig));
  };
  return {
    apply: async (object, dryRun) => {
      const client = await objectApi();
      const { PatchStrategy } = await import('@kubernetes/client-node');
      return client.patch(object, undefined, dryRun ? 'All' : undefined, fieldManager, true, PatchStrategy.ServerSideApply);
    },
    read: async (object) => {
      const client = await objectApi();
      try {
        return await client.read({
          apiVersion: object.apiVersion ?? '',
          kind: object.kind ?? '',
          metadata: { name: object.metadata?.name ?? '', ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}) },
        });
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    },
    list: async (apiVersion, kind, labelSelector) => {
      const client = await objectApi();
      try {
        return (await client.list(apiVersion, kind, undefined, undefined, undefined, undefined, undefined, labelSelector)).items.map((item) => ({
          ...item,
          apiVersion,
          kind,
        }));
      } catch (error) {
        // A kind the cluster does not serve (the install API before the base chart): nothing of it.
        if ((error as { code?: number }).code === 404) return [];
        throw error;
      }
    },
    remove: async (object, dryRun) => {
      const client = await objectApi();
      try {
        await client.delete(object, undefined, dryRun ? 'All' : undefined, undefined, undefined, 'Background');
      } catch (error) {
        if ((error as { code?: number }).code !== 404) throw error;
      }
    },
  };
}
