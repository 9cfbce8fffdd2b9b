import type { KubeConfig } from '@kubernetes/client-node';
import type { InputName, SourcedObject } from '../../analysis/index.js';
import { KINDS, KIND_NAMES, meshConfigTextOf } from '../../crds/index.js';
import { MESH_CONFIG_MAP_NAME } from '../../names/index.js';

export interface ClusterState {
  readonly objects: readonly SourcedObject[];
  /** The inputs read in full: analyzers may trust that what is not there does not exist. */
  readonly complete: readonly InputName[];
  /** The text of the `mesh` ConfigMap's `mesh` key in the mesh namespace, when there is one. */
  readonly meshConfigText?: string;
}

interface Listing {
  readonly input: InputName;
  readonly apiVersion: string;
  readonly kind: string;
  readonly list: () => Promise<{ items: unknown[] }>;
}

/**
 * What `analyze` reads from the cluster: every mesh resource, Namespace, Service, Pod, Deployment,
 * Secret (only their names and keys survive into the snapshot), MutatingWebhookConfiguration and
 * the mesh namespace's ConfigMaps,
 * in all namespaces so that references across namespaces resolve, and the mesh config.
 * List items come without `kind` and `apiVersion`; they are put back.
 */
export async function readClusterState(kubeConfig: KubeConfig, meshNamespace: string): Promise<ClusterState> {
  const client = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(client.CoreV1Api);
  const apps = kubeConfig.makeApiClient(client.AppsV1Api);
  const admission = kubeConfig.makeApiClient(client.AdmissionregistrationV1Api);
  const custom = kubeConfig.makeApiClient(client.CustomObjectsApi);
  const listings: Listing[] = [
    { input: 'Namespace', apiVersion: 'v1', kind: 'Namespace', list: () => core.listNamespace() },
    { input: 'Service', apiVersion: 'v1', kind: 'Service', list: () => core.listServiceForAllNamespaces() },
    { input: 'Pod', apiVersion: 'v1', kind: 'Pod', list: () => core.listPodForAllNamespaces() },
    { input: 'Secret', apiVersion: 'v1', kind: 'Secret', list: () => core.listSecretForAllNamespaces() },
    { input: 'Deployment', apiVersion: 'apps/v1', kind: 'Deployment', list: () => apps.listDeploymentForAllNamespaces() },
    {
      input: 'MutatingWebhookConfiguration',
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      list: () => admission.listMutatingWebhookConfiguration(),
    },
    ...KIND_NAMES.map((kind): Listing => {
      const { group, version, plural } = KINDS[kind];
      return {
        input: kind,
        apiVersion: `${group}/${version}`,
        kind,
        list: async () => (await custom.listClusterCustomObject({ group, version, plural })) as { items: unknown[] },
      };
    }),
    // Only the mesh namespace's: the injector's ConfigMap is the one analyzers read.
    { input: 'ConfigMap', apiVersion: 'v1', kind: 'ConfigMap', list: () => core.listNamespacedConfigMap({ namespace: meshNamespace }) },
  ];
  const lists = await Promise.all(listings.map(async (listing) => ({ listing, items: (await listing.list()).items })));
  const objects = lists.flatMap(({ listing, items }) =>
    items.map((item) => ({ object: { ...(item as object), apiVersion: listing.apiVersion, kind: listing.kind } })),
  );
  const configMap = await core.readNamespacedConfigMap({ name: MESH_CONFIG_MAP_NAME, namespace: meshNamespace }).catch(() => undefined);
  const meshConfigText = meshConfigTextOf(configMap as Record<string, unknown> | undefined);
  return { objects, complete: [...listings.map((l) => l.input), 'MeshObject'], ...(meshConfigText !== undefined ? { meshConfigText } : {}) };
}
