import { createHash } from 'node:crypto';
import type { ResourceRegistry } from './resource-registry.js';
import type { ResourceType } from './resource-type.js';

const QUERY_PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty'];

/**
 * OpenAPI v3 documents with the path operations and their query parameters. kubectl reads them
 * to learn that the server validates fields itself (`fieldValidation`), so it sends
 * `fieldValidation=Strict` and skips client-side schema validation. Schemas are left out.
 */
export function openApiV3Root(registry: ResourceRegistry): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const gv of groupVersions(registry)) {
    const doc = openApiV3GroupVersion(registry, gv.group, gv.version);
    if (!doc) continue;
    const key = gv.group ? `apis/${gv.group}/${gv.version}` : 'api/v1';
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hashOf(doc)}` };
  }
  return { paths };
}

/** The document for `api/v1` or `apis/<group>/<version>`, or undefined when not served. */
export function openApiV3Document(registry: ResourceRegistry, path: string): Record<string, unknown> | undefined {
  const parts = path.split('/');
  if (parts[0] === 'api' && parts[1] === 'v1' && parts.length === 2) return openApiV3GroupVersion(registry, '', 'v1');
  if (parts[0] === 'apis' && parts.length === 3) return openApiV3GroupVersion(registry, parts[1] as string, parts[2] as string);
  return undefined;
}

function groupVersions(registry: ResourceRegistry): { group: string; version: string }[] {
  const seen = new Set<string>();
  const out: { group: string; version: string }[] = [];
  for (const type of registry.all()) {
    for (const version of type.versions) {
      const key = `${type.group}/${version}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ group: type.group, version });
    }
  }
  return out;
}

function openApiV3GroupVersion(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const types = registry.resourcesIn(group, version);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  for (const type of types) {
    const base = group ? `/apis/${group}/${version}` : '/api/v1';
    const collection = type.namespaced ? `${base}/namespaces/{namespace}/${type.plural}` : `${base}/${type.plural}`;
    const gvk = { group, version, kind: type.kind };
    if (type.verbs.includes('create')) paths[collection] = { post: operation(type, 'post', gvk) };
    if (type.verbs.includes('get')) {
      paths[`${collection}/{name}`] = {
        get: operation(type, 'get', gvk),
        put: operation(type, 'put', gvk),
        patch: operation(type, 'patch', gvk),
        delete: operation(type, 'delete', gvk),
      };
    }
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.35.0' },
    paths,
    components: { schemas: {} },
  };
}

function operation(type: ResourceType, action: string, gvk: { group: string; version: string; kind: string }): Record<string, unknown> {
  return {
    operationId: `${action}${type.kind}`,
    parameters: QUERY_PARAMETERS.map((name) => ({ name, in: 'query', schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true } })),
    ...(action === 'patch' ? { requestBody: { content: Object.fromEntries(patchTypes(type).map((t) => [t, { schema: { type: 'object' } }])) } } : {}),
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  };
}

function patchTypes(type: ResourceType): string[] {
  const types = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json'];
  return type.custom ? types : [...types, 'application/strategic-merge-patch+json'];
}

function hashOf(doc: unknown): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase().slice(0, 128);
}
