import type { KubeConfig } from '@kubernetes/client-node';
import type { RecordedSightings } from '../../dataplane/decisions/index.js';
import { MeshError, type KubeObject } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';
import { dumpOf } from '../proxyconfig/config-dump.js';
import { podAdmin, PROXY_ADMIN_PORT } from '../proxyconfig/pod-admin.js';
import type { ProxyNodeFacts } from './offline-decisions.js';

/** A pod's traffic record (`/recent_requests` of its proxy), through a port-forward. */
export async function recentRequestsOf(kubeConfig: KubeConfig, namespace: string, pod: string): Promise<RecordedSightings[]> {
  const response = await podHttp(kubeConfig, { namespace, pod, port: PROXY_ADMIN_PORT, method: 'GET', path: '/recent_requests' });
  if (response.status >= 400) throw new MeshError('proxy-config-failed', `GET /recent_requests: ${response.status} ${response.body.trim()}`);
  return (JSON.parse(response.body) as { entries?: RecordedSightings[] }).entries ?? [];
}

/** A pod's proxy node, as its bootstrap names it, and its traffic record. */
export async function recentTrafficOf(kubeConfig: KubeConfig, namespace: string, pod: string): Promise<{ node: ProxyNodeFacts; entries: RecordedSightings[] }> {
  const dump = await podAdmin(kubeConfig, namespace, pod).configDump();
  const node = (dumpOf(dump, 'BootstrapConfigDump')['bootstrap'] as { node?: { id?: string; metadata?: Record<string, unknown> } } | undefined)?.node;
  if (!node?.id) throw new MeshError('proxy-config-failed', 'its config dump names no node');
  return { node: { id: node.id, metadata: node.metadata ?? {} }, entries: await recentRequestsOf(kubeConfig, namespace, pod) };
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
