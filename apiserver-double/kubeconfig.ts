import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export const KUBECONFIG_NAME = 'mesh-double';

/** The kubeconfig document (cluster, user, context) for a server at `url`. */
export function kubeconfigDocument(url: string, token: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless TLS verification is (vacuously) skipped.
    clusters: [{ name: KUBECONFIG_NAME, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: KUBECONFIG_NAME, user: { token } }],
    contexts: [{ name: KUBECONFIG_NAME, context: { cluster: KUBECONFIG_NAME, user: KUBECONFIG_NAME, namespace: 'default' } }],
    'current-context': KUBECONFIG_NAME,
    preferences: {},
  };
}

export function kubeconfigYaml(url: string, token: string): string {
  return stringify(kubeconfigDocument(url, token));
}

/** A fresh client-node KubeConfig for the server (callers may change it freely). */
export function newKubeConfig(url: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(url, token));
  return kc;
}
