import type { VirtualServiceRouteOptions } from '../virtual-service-routes.js';
import type { Generator, PushMemo } from '../../generator.js';
import { memoOf } from '../../encoding/index.js';
import type { Proxy } from '../../proxy.js';
import { ROUTE_TYPE } from '../../envoy/type-urls.js';
import type { PushContext } from '../../model/push-context.js';
import { buildSidecarRouteConfiguration } from './sidecar-route-configuration.js';

/**
 * What a sidecar's route configuration depends on besides the push context: its DNS domain and
 * namespace (short-name domains, VirtualService visibility), and its labels only when some
 * VirtualService matches on source labels.
 */
function routeCacheKey(proxy: Proxy, usesSourceLabels: boolean): string {
  const labels = usesSourceLabels
    ? Object.entries(proxy.metadata.labels)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => `${key}=${value}`)
        .join(',')
    : '';
  return `${proxy.dnsDomain}@${proxy.configNamespace}@${labels}`;
}

/**
 * RDS for sidecars: a route configuration per requested name (RDS is not a wildcard type, so a
 * request naming nothing gets nothing); endpoint-only pushes leave it alone. Encoded routes are
 * shared by the sidecars of a namespace.
 */
export function newSidecarRdsGenerator(options: VirtualServiceRouteOptions = {}): Generator<PushContext> {
  const usesSourceLabels = (push: PushContext, memo: PushMemo): boolean =>
    memo.get('sidecar-rds/source-labels', () =>
      push.virtualServices.some((entry) =>
        (entry.virtualService.spec.http ?? []).some((http) =>
          (http.match ?? []).some((match) => match.sourceLabels !== undefined || match.sourceNamespace !== undefined),
        ),
      ),
    );
  return {
    typeUrl: ROUTE_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const memo = memoOf(request);
      const names = request.delta?.subscribed ?? request.names;
      const key = routeCacheKey(proxy, usesSourceLabels(push, memo));
      // Virtual hosts without a VirtualService, shared by the proxies of a push (see buildSidecarRouteConfiguration).
      const sharedHosts = memo.get('sidecar-rds/shared-hosts', () => new Map<string, object>());
      return {
        resources: [...new Set(names)].sort().map((name) => ({
          name,
          cacheKey: `${name}@${key}`,
          resource: () => buildSidecarRouteConfiguration(proxy, push, name, sharedHosts, options, request.findings),
        })),
      };
    },
  };
}
