import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import {
  controllerFor,
  lazyApiClient,
  newInformerSource,
  type Clock,
  type Controller,
  type KubeObject,
  type Logger,
  type Manager,
} from '../../runtime/index.js';
import type { RootBundleSource } from './trust-bundle-set.js';

export const ROOT_CERT_CONFIG_MAP = 'mesh-ca-root-cert';
export const ROOT_CERT_KEY = 'root-cert.pem';

export interface RootCertPublisherOptions {
  readonly manager: Manager;
  readonly kubeConfig: KubeConfig;
  /** Our trust bundle: the CA's roots, or the external signer's. */
  readonly ca: RootBundleSource;
  /** The `ca` scope. */
  readonly log: Logger;
  readonly clock?: Clock;
}

interface NamespaceObject extends KubeObject {
  status?: { phase?: string };
}

/**
 * Keeps the `mesh-ca-root-cert` ConfigMap (key `root-cert.pem`: the trust bundle) in every
 * namespace, on the elected leader: created for new namespaces, restored when edited or
 * deleted, rewritten when the root rotates. Registers its sources and controller with `manager`.
 */
export function addRootCertPublisher(options: RootCertPublisherOptions): Controller {
  const { manager, kubeConfig, ca, log } = options;
  const clock = options.clock ?? manager.clock;
  const core = lazyApiClient(kubeConfig, (k8s) => k8s.CoreV1Api);
  const namespaces = newInformerSource<NamespaceObject>({ name: 'namespaces', kubeConfig, path: '/api/v1/namespaces', log, clock });
  const configMaps = newInformerSource<V1ConfigMap & KubeObject>({
    name: 'root-cert-configmaps',
    kubeConfig,
    path: '/api/v1/configmaps',
    fieldSelector: `metadata.name=${ROOT_CERT_CONFIG_MAP}`,
    log,
    clock,
  });

  const controller = controllerFor(manager, 'root-cert-publisher')
    .watches(namespaces, (ns) => ({ namespace: ns.metadata?.name ?? '', name: ROOT_CERT_CONFIG_MAP }))
    .watches(configMaps)
    .withLogger(log)
    .complete(async ({ key, log: reconcileLog }) => {
      const namespace = namespaces.store.get({ namespace: '', name: key.namespace });
      if (!namespace || namespace.status?.phase === 'Terminating') return;
      const bundle = ca.rootBundlePem();
      const current = configMaps.store.get(key);
      if (current?.data?.[ROOT_CERT_KEY] === bundle) return;
      const body: V1ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: ROOT_CERT_CONFIG_MAP,
          namespace: key.namespace,
          labels: { ...(current?.metadata?.labels ?? {}), 'mesh.io/config': 'true' },
          ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        },
        data: { ...(current?.data ?? {}), [ROOT_CERT_KEY]: bundle },
      };
      const api = await core();
      // A failure, such as the cache being behind (a conflict, or the object appeared or vanished), throws: retried with backoff.
      if (current) await api.replaceNamespacedConfigMap({ name: ROOT_CERT_CONFIG_MAP, namespace: key.namespace, body });
      else await api.createNamespacedConfigMap({ namespace: key.namespace, body });
      reconcileLog.info({ namespace: key.namespace }, current ? 'updated the root certificate config map' : 'created the root certificate config map');
      return undefined;
    });

  ca.onRootBundleChange(() => {
    for (const ns of namespaces.store.list()) controller.enqueue({ namespace: ns.metadata?.name ?? '', name: ROOT_CERT_CONFIG_MAP });
  });
  return controller;
}
