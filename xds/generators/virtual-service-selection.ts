import type { Proxy } from '../proxy.js';
import type { IndexedVirtualService, PushContext } from '../model/push-context.js';

/** Whether a VirtualService applies to sidecars: no `gateways`, or `mesh` among them. */
export function isBoundToMesh(entry: IndexedVirtualService): boolean {
  const gateways = entry.virtualService.spec.gateways;
  return gateways === undefined || gateways.length === 0 || gateways.includes('mesh');
}

/** Whether the proxy sees the VirtualService under its `exportTo` (absent or empty: everyone). */
export function isVisibleTo(entry: IndexedVirtualService, proxy: Proxy): boolean {
  const exportTo = entry.virtualService.spec.exportTo;
  if (exportTo === undefined || exportTo.length === 0) return true;
  return exportTo.some((to) => to === '*' || to === proxy.configNamespace || (to === '.' && entry.namespace === proxy.configNamespace));
}

/**
 * The mesh VirtualService that routes `hostname` for this proxy: one naming the host exactly
 * first, then the most specific wildcard (`*.ns.svc.cluster.local` before `*`); among equals the
 * first in namespace, name order (the config store keeps no creation time to order by).
 */
export function virtualServiceFor(push: PushContext, proxy: Proxy, hostname: string): IndexedVirtualService | undefined {
  let best: { entry: IndexedVirtualService; specificity: number } | undefined;
  for (const entry of push.virtualServices) {
    if (!isBoundToMesh(entry) || !isVisibleTo(entry, proxy)) continue;
    for (const host of entry.hosts) {
      const specificity = hostSpecificity(host, hostname);
      if (specificity > (best?.specificity ?? -1)) best = { entry, specificity };
    }
  }
  return best?.entry;
}

/** -1: no match; exact matches rank above every wildcard; longer wildcards above shorter ones. */
function hostSpecificity(pattern: string, hostname: string): number {
  if (pattern === hostname) return Number.MAX_SAFE_INTEGER;
  if (pattern === '*') return 0;
  if (pattern.startsWith('*.') && hostname.endsWith(pattern.slice(1))) return pattern.length;
  return -1;
}
