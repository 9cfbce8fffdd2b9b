import type { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { LABELS } from '../../names/index.js';
import { clusterObjectsOf } from '../cluster-objects.js';
import {
  controllerFor,
  newInformerSource,
  objectKeyOf,
  type KubeObject,
  type Logger,
  type Manager,
  type MeshMetrics,
  type ObjectKey,
  type Source,
  type Store,
} from '../../runtime/index.js';
import { newMeshOperatorReconciler } from './mesh-operator-reconciler.js';
import type { MeshOperatorStatus } from './operator-status.js';

export interface OperatorSetupOptions {
  readonly kubeConfig: KubeConfig;
  /** `--watchedNamespaces`: where MeshOperator resources are reconciled. */
  readonly watchedNamespaces: readonly string[];
  /** `--manifests`: holds `charts/` and `profiles/`. */
  readonly manifestsDir: string;
  readonly helm?: string;
  /** `--revision`: the MeshOperators of this revision only. */
  readonly revision: string;
  readonly metrics: MeshMetrics<'meshctl'>;
  readonly log: Logger;
}

/**
 * Registers the install operator on a manager: an informer of MeshOperators per watched
 * namespace, one of the Deployments the installations own (so a Deployment becoming ready
 * updates its MeshOperator's status), and the controller reconciling them.
 */
export function setupOperatorWithManager(manager: Manager, options: OperatorSetupOptions): void {
  const { kubeConfig, log } = options;
  const common = { kubeConfig, log, clock: manager.clock };
  const meshOperators = options.watchedNamespaces.map((namespace) =>
    newInformerSource<KubeObject>({
      ...common,
      name: `meshoperators:${namespace}`,
      path: `/apis/install.mesh.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/meshoperators`,
    }),
  );
  const deployments = newInformerSource<KubeObject>({
    ...common,
    name: 'deployments:owned',
    path: '/apis/apps/v1/deployments',
    labelSelector: LABELS.operatorOwner,
  });
  const store = unionStore(meshOperators);
  let builder = controllerFor(manager, 'mesh-operator').withLogger(log);
  for (const source of meshOperators) builder = builder.watches(source);
  builder
    .watches(deployments, (deployment) => {
      const owner = deployment.metadata?.labels?.[LABELS.operatorOwner];
      return store
        .list()
        .filter((meshOperator) => meshOperator.metadata?.name === owner)
        .map(objectKeyOf);
    })
    .complete(
      newMeshOperatorReconciler({
        store,
        cluster: clusterObjectsOf(kubeConfig, 'mesh-operator'),
        manifestsDir: options.manifestsDir,
        ...(options.helm ? { helm: options.helm } : {}),
        revision: options.revision,
        writeStatus: statusWriter(kubeConfig),
        metrics: options.metrics,
      }),
    );
}

function unionStore(sources: readonly Source<KubeObject>[]): Store<KubeObject> {
  return {
    get: (key) => sources.map((source) => source.store.get(key)).find((object) => object !== undefined),
    list: () => sources.flatMap((source) => source.store.list()),
  };
}

/** JSON merge patch of `/status`; fields no longer set are cleared (null), a vanished resource ignored. */
function statusWriter(kubeConfig: KubeConfig): (key: ObjectKey, status: MeshOperatorStatus) => Promise<void> {
  // client-node is loaded with the first write (the offline install commands never load it).
  let api: CustomObjectsApi | undefined;
  return async (key, status) => {
    const { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
    api ??= kubeConfig.makeApiClient(CustomObjectsApi);
    const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const components = Object.fromEntries(
      Object.entries(status.componentStatus ?? {}).map(([name, component]) => [name, { status: component.status, message: component.message ?? null }]),
    );
    const body = { status: { status: status.status, message: status.message ?? null, componentStatus: status.componentStatus ? components : null } };
    try {
      await api.patchNamespacedCustomObjectStatus(
        { group: 'install.mesh.io', version: 'v1alpha1', namespace: key.namespace, plural: 'meshoperators', name: key.name, body },
        mergePatch,
      );
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    }
  };
}
