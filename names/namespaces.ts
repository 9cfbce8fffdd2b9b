/** Namespaces whose pods are never injected: the cluster's own. */
export const IGNORED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];
