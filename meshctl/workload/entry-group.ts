import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { apiVersionOf, KINDS, validateResource } from '../../crds/index.js';
import { errorMessage, MeshError, UsageError } from '../../runtime/index.js';
import type { EntryGroup } from './entry-files.js';

type Json = Record<string, unknown>;

const objectAt = (value: unknown, key: string): Json => {
  const child = typeof value === 'object' && value !== null ? (value as Json)[key] : undefined;
  return typeof child === 'object' && child !== null && !Array.isArray(child) ? (child as Json) : {};
};
const stringAt = (value: Json, key: string): string => (typeof value[key] === 'string' ? value[key] : '');
const stringMap = (value: Json): Record<string, string> =>
  Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

/** The group's parts the files are made from; an empty service account is `default`, as the reference fills it in. */
export function entryGroupOf(object: unknown): EntryGroup {
  const metadata = objectAt(object, 'metadata');
  const spec = objectAt(object, 'spec');
  const template = objectAt(spec, 'template');
  const probe = objectAt(spec, 'probe');
  const ports = Object.entries(objectAt(template, 'ports')).filter((entry): entry is [string, number] => typeof entry[1] === 'number');
  return {
    name: stringAt(metadata, 'name'),
    namespace: stringAt(metadata, 'namespace'),
    annotations: stringMap(objectAt(metadata, 'annotations')),
    metadataLabels: stringMap(objectAt(objectAt(spec, 'metadata'), 'labels')),
    metadataAnnotations: stringMap(objectAt(objectAt(spec, 'metadata'), 'annotations')),
    templateLabels: stringMap(objectAt(template, 'labels')),
    ports: Object.fromEntries(ports),
    serviceAccount: stringAt(template, 'serviceAccount') || 'default',
    network: stringAt(template, 'network'),
    ...(Object.keys(probe).length > 0 ? { probe } : {}),
  };
}

/**
 * The WorkloadGroup of `-f <file>`, checked as `meshctl validate` checks one (an apiVersion and
 * kind left out are taken as a WorkloadGroup's, as the reference's examples leave them out); its
 * namespace, when the file gives none, is `-n`'s. Errors name the file and the field.
 */
export async function readGroupFile(file: string, namespaceFlag: string): Promise<EntryGroup> {
  let document: unknown;
  try {
    document = parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`-f ${file}: cannot read a WorkloadGroup: ${errorMessage(error)}`, { cause: error });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new UsageError(`-f ${file}: expected a WorkloadGroup object`);
  const given = document as Json;
  if (given['kind'] !== undefined && given['kind'] !== 'WorkloadGroup')
    throw new UsageError(`-f ${file}: kind: expected WorkloadGroup, got ${JSON.stringify(given['kind'])}`);
  const metadata = objectAt(given, 'metadata');
  const namespace = stringAt(metadata, 'namespace') || namespaceFlag;
  if (namespace === '') throw new UsageError(`-f ${file}: metadata.namespace: expecting the WorkloadGroup's namespace (or --namespace)`);
  const group = {
    ...given,
    apiVersion: given['apiVersion'] ?? apiVersionOf('WorkloadGroup'),
    kind: 'WorkloadGroup',
    metadata: { ...metadata, namespace },
    spec: given['spec'] ?? {},
  };
  const [issue] = validateResource(group).errors;
  if (issue) throw new UsageError(`-f ${file}: ${issue.path || '(root)'}: ${issue.message}`);
  return entryGroupOf(group);
}

/** The WorkloadGroup `--name` in `-n`, from the API server. */
export async function readGroupFromCluster(kubeConfig: KubeConfig, name: string, namespace: string): Promise<EntryGroup> {
  const { group, version, plural } = KINDS.WorkloadGroup;
  const { CustomObjectsApi } = await import('@kubernetes/client-node');
  try {
    return entryGroupOf(await kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group, version, namespace, plural, name }));
  } catch (error) {
    throw new MeshError('workload-entry-config-failed', `workloadgroup ${name} not found in namespace ${namespace}: ${describeApiError(error)}`, {
      cause: error,
    });
  }
}

/** The API server's own message (a Status body), else the error's. */
export function describeApiError(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const message = (JSON.parse(body) as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    } catch {
      if (body !== '') return body;
    }
  }
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : errorMessage(error);
}
