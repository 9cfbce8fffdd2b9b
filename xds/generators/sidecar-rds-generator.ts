import type { Generator } from '../generator.js';
import { ROUTE_TYPE } from '../type-urls.js';
import type { PushContext } from './push-context.js';
import { buildSidecarRouteConfiguration } from './sidecar-route-configuration.js';

/**
 * RDS for sidecars: a route configuration per requested name (RDS is not a wildcard type, so a
 * request naming nothing gets nothing); endpoint-only pushes leave it alone.
 */
export function newSidecarRdsGenerator(): Generator<PushContext> {
  return {
    typeUrl: ROUTE_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const names = request.delta?.subscribed ?? request.names;
      return { resources: [...new Set(names)].sort().map((name) => ({ name, resource: () => buildSidecarRouteConfiguration(proxy, push, name) })) };
    },
  };
}
