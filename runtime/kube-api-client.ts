import type { ApiType, Configuration, KubeConfig } from '@kubernetes/client-node';
import { MeshError } from './errors.js';

/** client-node's module, as `await import('@kubernetes/client-node')` gives it. */
export type KubeApi = typeof import('@kubernetes/client-node');

/**
 * An API client of `kubeConfig`, built on its first use: client-node (a 14 MB module) is loaded
 * then, not when the program starts. A config without a current cluster is refused at once, with
 * the message `makeApiClient` throws, as when the client was built at once.
 */
export function lazyApiClient<T extends ApiType>(kubeConfig: KubeConfig, type: (k8s: KubeApi) => new (config: Configuration) => T): () => Promise<T> {
  if (!kubeConfig.getCurrentCluster()) throw new MeshError('kube-no-cluster', 'No active cluster!');
  let client: Promise<T> | undefined;
  return () => (client ??= import('@kubernetes/client-node').then((k8s) => kubeConfig.makeApiClient(type(k8s))));
}
