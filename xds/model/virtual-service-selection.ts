import type { Proxy } from '../proxy.js';
import type { IndexedVirtualService, PushContext } from './push-context.js';

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
  const exact = push.meshVirtualServices.byHost.get(hostname)?.find((entry) => isVisibleTo(entry, proxy));
  if (exact) return exact;
  let best: { entry: IndexedVirtualService; specificity: number } | undefined;
  for (const entry of push.meshVirtualServices.wildcards) {
    if (!isVisibleTo(entry, proxy)) continue;
    for (const host of entry.hosts) {
      const specificity = hostSpecificity(host, hostname);
      if (specificity > (best?.specificity ?? -1)) best = { entry, specificity };
    }
  }
  return best?.entry;
}

/** -1: no match; longer wildcards rank above shorter ones. */
function hostSpecificity(pattern: string, hostname: string): number {
  if (pattern === '*') return 0;
  if (pattern.startsWith('*.') && hostname.endsWith(pattern.slice(1))) return pattern.length;
  return -1;
}
