import type { ResourceRoute } from './request-path.js';

/** One resource request as the authorizer sees it: RBAC's (verb, apiGroup, resource) and who asked. */
export interface ApiRequestRecord {
  verb: string;
  /** `''` for the core group. */
  apiGroup: string;
  /** The plural, with `/<subresource>` when the request addressed one (`validatingwebhookconfigurations`, `peerauthentications/status`). */
  resource: string;
  namespace?: string;
  name?: string;
  /** `system:serviceaccount:<ns>:<sa>` for tokens the double issued, else the admin. */
  username: string;
  /** Set for `?dryRun=All` writes (still authorized as the verb). */
  dryRun?: boolean;
}

/** Called once per resource request, before it is served (discovery and OpenAPI are not recorded). */
export type ApiRequestRecorder = (record: ApiRequestRecord) => void;

/** The RBAC verb of a request, as the real API server's request-info resolver names it. */
export function requestVerb(method: string, route: ResourceRoute, query: URLSearchParams): string {
  const watching = route.watchPrefix || query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watching) return 'watch';
      return route.name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return route.name === undefined ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

export function requestRecord(method: string, route: ResourceRoute, query: URLSearchParams, username: string): ApiRequestRecord {
  return {
    verb: requestVerb(method, route, query),
    apiGroup: route.type.group,
    resource: route.subresource ? `${route.type.plural}/${route.subresource}` : route.type.plural,
    ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
    ...(route.name !== undefined ? { name: route.name } : {}),
    username,
    ...(query.get('dryRun') === 'All' ? { dryRun: true } : {}),
  };
}
