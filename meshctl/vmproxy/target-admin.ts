import type { KubeConfig } from '@kubernetes/client-node';
import { podAdmin } from '../proxyconfig/pod-admin.js';
import type { ProxyAdmin } from '../proxyconfig/proxy-config.js';
import { daemonAdmin } from './daemon-admin.js';
import type { ProxyTarget } from './proxy-target.js';

/** A target's admin answers: a pod's proxy through a port-forward, a VM's from its daemon. */
export function targetAdmin(kubeConfig: KubeConfig, target: ProxyTarget, meshNamespace: string, options: { includeEds?: boolean } = {}): ProxyAdmin {
  return target.kind === 'pod' ? podAdmin(kubeConfig, target.namespace, target.name, options) : daemonAdmin(kubeConfig, meshNamespace, target.proxyId);
}

/** How messages name a target: `<pod>.<namespace>`, or a VM proxy's ID. */
export function targetName(target: ProxyTarget): string {
  return target.kind === 'pod' ? `${target.name}.${target.namespace}` : target.proxyId;
}
