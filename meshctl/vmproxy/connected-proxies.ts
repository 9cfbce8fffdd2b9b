import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError } from '../../runtime/index.js';
import { DAEMON_QUERY_TIMEOUT_MS, queryDaemons } from '../proxystatus/daemon-query.js';

/** One proxy connected to a daemon, as the daemon's `/debug/adsz` lists it. */
export interface ConnectedProxy {
  /** `<name>.<namespace>`, as `proxy-status` names it. */
  readonly id: string;
  readonly namespace: string;
  /** The first IP of its node ID (`<type>~<ip>~<id>~<domain>`). */
  readonly ip: string;
  /** The daemon pod it is connected to. */
  readonly daemon: string;
}

/** Every proxy connected to any daemon of the mesh namespace (each once: the first daemon that lists it). */
export async function connectedProxies(kubeConfig: KubeConfig, meshNamespace: string): Promise<ConnectedProxy[]> {
  const { answers, failures } = await queryDaemons(kubeConfig, { meshNamespace, revision: '', path: '/debug/adsz', timeoutMs: DAEMON_QUERY_TIMEOUT_MS });
  if (answers.size === 0)
    throw new MeshError('proxy-config-failed', `no meshd instance answered: ${[...failures].map(([pod, why]) => `${pod}: ${why}`).join('; ')}`);
  const proxies = new Map<string, ConnectedProxy>();
  for (const [daemon, body] of answers) {
    const clients = (JSON.parse(body) as { clients?: { proxy?: string; nodeId?: string; namespace?: string }[] }).clients ?? [];
    for (const client of clients) {
      if (client.proxy === undefined || proxies.has(client.proxy)) continue;
      const ip = (client.nodeId ?? '').split('~')[1]?.split(',')[0] ?? '';
      proxies.set(client.proxy, { id: client.proxy, namespace: client.namespace ?? '', ip, daemon });
    }
  }
  return [...proxies.values()];
}
