import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resource-registry.js';
import { apiVersionOf } from './resource-type.js';
import type { ResourceType } from './resource-type.js';

export const AGGREGATED_DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

const SUBRESOURCE_VERBS: Record<string, string[]> = {
  status: ['get', 'patch', 'update'],
  approval: ['get', 'patch', 'update'],
  finalize: ['update'],
  token: ['create'],
  log: ['get'],
  portforward: ['create', 'get'],
  proxy: ['create', 'delete', 'get', 'patch', 'update'],
};

const SUBRESOURCE_KIND: Record<string, { group: string; version: string; kind: string }> = {
  token: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
  portforward: { group: '', version: 'v1', kind: 'PodPortForwardOptions' },
  proxy: { group: '', version: 'v1', kind: 'PodProxyOptions' },
};

/** `GET /version` of a server of that Kubernetes version (`1.35.0`). */
export function versionInfo(kubernetesVersion: string): Record<string, string> {
  const [major = '1', minor = '0'] = kubernetesVersion.split('.');
  return {
    major,
    minor,
    gitVersion: `v${kubernetesVersion}-mesh-double`,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.25.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** `GET /api`. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: string[]): Record<string, unknown> {
  const entries = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

/** `GET /apis`. */
export function groupList(registry: ResourceRegistry): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map((g) => groupEntry(g.name, g.versions)) };
}

/** `GET /apis/<group>`, or undefined when the group is not served. */
export function group(registry: ResourceRegistry, name: string): Record<string, unknown> | undefined {
  const found = registry.groups().find((g) => g.name === name);
  return found ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(found.name, found.versions) } : undefined;
}

function storageVersionHash(type: ResourceType): string {
  return createHash('sha256')
    .update(`${type.group}/${type.versions[0] ?? ''}/${type.kind}`)
    .digest('base64')
    .slice(0, 11);
}

/** `GET /api/v1` or `/apis/<group>/<version>`, or undefined when not served. */
export function resourceList(registry: ResourceRegistry, groupName: string, version: string): Record<string, unknown> | undefined {
  const types = registry.resourcesIn(groupName, version);
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const type of types) {
    resources.push({
      name: type.plural,
      singularName: type.singular,
      namespaced: type.namespaced,
      kind: type.kind,
      verbs: type.verbs,
      ...(type.shortNames.length ? { shortNames: type.shortNames } : {}),
      ...(type.categories.length ? { categories: type.categories } : {}),
      ...(type.ephemeral ? {} : { storageVersionHash: storageVersionHash(type) }),
    });
    for (const sub of type.subresources) {
      const subKind = SUBRESOURCE_KIND[sub];
      resources.push({
        name: `${type.plural}/${sub}`,
        singularName: '',
        namespaced: type.namespaced,
        ...(subKind ? { group: subKind.group, version: subKind.version } : {}),
        kind: subKind?.kind ?? type.kind,
        verbs: SUBRESOURCE_VERBS[sub] ?? ['get'],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(groupName, version), resources };
}

function discoveryResource(type: ResourceType, version: string): Record<string, unknown> {
  return {
    resource: type.plural,
    responseKind: { group: type.group, version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: type.verbs,
    ...(type.shortNames.length ? { shortNames: type.shortNames } : {}),
    ...(type.categories.length ? { categories: type.categories } : {}),
    ...(type.subresources.length
      ? {
          subresources: type.subresources.map((sub) => {
            const subKind = SUBRESOURCE_KIND[sub];
            return {
              subresource: sub,
              responseKind: subKind ?? { group: type.group, version, kind: type.kind },
              verbs: SUBRESOURCE_VERBS[sub] ?? ['get'],
            };
          }),
        }
      : {}),
  };
}

/** Aggregated discovery (apidiscovery.k8s.io/v2) for `/api` (`core`) or `/apis`. */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean): Record<string, unknown> {
  const groups = core ? [{ name: '', versions: ['v1'] }] : registry.groups();
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.name, creationTimestamp: null },
      versions: g.versions.map((version) => ({
        version,
        resources: registry.resourcesIn(g.name, version).map((t) => discoveryResource(t, version)),
        freshness: 'Current',
      })),
    })),
  };
}
