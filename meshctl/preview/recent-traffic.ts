import type { KubeConfig } from '@kubernetes/client-node';
import type { RecordedSightings } from '../../dataplane/decisions/index.js';
import { MeshError, type KubeObject } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';
import { dumpOf, parseConfigDump } from '../proxyconfig/config-dump.js';
import { PROXY_ADMIN_PORT } from '../proxyconfig/pod-admin.js';
import type { ProxyNodeFacts } from './offline-decisions.js';

/** A pod's proxy node (from its bootstrap) and its traffic record, through port-forwards. */
export async function recentTrafficOf(kubeConfig: KubeConfig, namespace: string, pod: string): Promise<{ node: ProxyNodeFacts; entries: RecordedSightings[] }> {
  const get = async (path: string): Promise<string> => {
    const response = await podHttp(kubeConfig, { namespace, pod, port: PROXY_ADMIN_PORT, method: 'GET', path });
    if (response.status >= 400) throw new MeshError('proxy-config-failed', `GET ${path}: ${response.status} ${response.body.trim()}`);
    return response.body;
  };
  const dump = parseConfigDump(await get('/config_dump'), `the config dump of ${pod}.${namespace}`);
  const node = (dumpOf(dump, 'BootstrapConfigDump')['bootstrap'] as { node?: { id?: string; metadata?: Record<string, unknown> } } | undefined)?.node;
  if (!node?.id) throw new MeshError('proxy-config-failed', 'its config dump names no node');
  const record = JSON.parse(await get('/recent_requests')) as { entries?: RecordedSightings[] };
  return { node: { id: node.id, metadata: node.metadata ?? {} }, entries: record.entries ?? [] };
}

/**
 * Pods by their address, to name the source of plain-text traffic: host-network pods share their
 * node's address and an address two pods claim names neither, so both are left out.
 */
export function podNamesByAddress(pods: readonly KubeObject[]): Map<string, string> {
  const named = new Map<string, string>();
  const shared = new Set<string>();
  for (const pod of pods as readonly (KubeObject & { spec?: { hostNetwork?: boolean }; status?: { podIP?: string } })[]) {
    const address = pod.status?.podIP;
    if (!address || pod.spec?.hostNetwork === true) continue;
    if (named.has(address)) shared.add(address);
    named.set(address, `${pod.metadata?.name ?? ''}.${pod.metadata?.namespace ?? ''}`);
  }
  for (const address of shared) named.delete(address);
  return named;
}
