import type { ResourceRegistry } from './resource-registry.js';
import type { ResourceType } from './resource-type.js';

export interface ResourceRoute {
  kind: 'resource';
  group: string;
  version: string;
  type: ResourceType;
  /** The namespace segment of the path, if any. */
  namespace?: string;
  name?: string;
  subresource?: string;
  /** The deprecated `/watch/` path prefix. */
  watchPrefix: boolean;
}

export type Route =
  | { kind: 'version' }
  | { kind: 'health' }
  | { kind: 'core-versions' }
  | { kind: 'groups' }
  | { kind: 'group'; group: string }
  | { kind: 'resource-list'; group: string; version: string }
  | { kind: 'openapi'; path: string }
  | { kind: 'openid-configuration' }
  | { kind: 'jwks' }
  | ResourceRoute
  | { kind: 'not-found' };

/** Maps a URL path onto what it addresses, with the kinds served right now. */
export function routeOf(pathname: string, registry: ResourceRegistry): Route {
  const segments = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  const [first, second, third] = segments;
  if (first === 'version' && segments.length === 1) return { kind: 'version' };
  if ((first === 'healthz' || first === 'livez' || first === 'readyz') && segments.length <= 2) return { kind: 'health' };
  if (first === 'openapi') return { kind: 'openapi', path: segments.slice(1).join('/') };
  if (first === '.well-known' && second === 'openid-configuration') return { kind: 'openid-configuration' };
  if (first === 'openid' && second === 'v1' && third === 'jwks') return { kind: 'jwks' };
  let group: string;
  let version: string;
  let rest: string[];
  if (first === 'api') {
    if (segments.length === 1) return { kind: 'core-versions' };
    if (second !== 'v1') return { kind: 'not-found' };
    group = '';
    version = 'v1';
    rest = segments.slice(2);
  } else if (first === 'apis') {
    if (second === undefined) return { kind: 'groups' };
    if (third === undefined) return { kind: 'group', group: second };
    group = second;
    version = third;
    rest = segments.slice(3);
  } else {
    return { kind: 'not-found' };
  }
  if (rest.length === 0) return { kind: 'resource-list', group, version };
  let watchPrefix = false;
  if (rest[0] === 'watch') {
    watchPrefix = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && rest[1] !== undefined) {
    const nested = registry.byResource(group, version, rest[2] as string);
    if (nested?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const [plural, name, subresource, ...extra] = rest;
  // Only a proxy subresource goes on with a path of its own (`pods/<name>/proxy/<path>`).
  if (plural === undefined || (extra.length > 0 && subresource !== 'proxy')) return { kind: 'not-found' };
  const type = registry.byResource(group, version, plural);
  if (!type) return { kind: 'not-found' };
  if (type.namespaced !== (namespace !== undefined) && name !== undefined) return { kind: 'not-found' };
  if (!type.namespaced && namespace !== undefined) return { kind: 'not-found' };
  if (subresource !== undefined && !type.subresources.includes(subresource)) return { kind: 'not-found' };
  return {
    kind: 'resource',
    group,
    version,
    type,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
    watchPrefix,
  };
}
