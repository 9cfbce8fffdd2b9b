import type { KubeObject } from '../../runtime/index.js';
import { crdResourceType } from '../crd-registration.js';
import { ADMIN_USER } from '../kind-defaults.js';
import { clone, deepEqual } from '../object-util.js';
import type { JsonObject } from '../object-util.js';
import { storageKey } from '../resource-registry.js';
import type { ResourceService, WriteOptions } from '../resource-service.js';
import type { ResourceType } from '../resource-type.js';
import { alreadyExists, conflict, notFound, STALE_OBJECT_MESSAGE } from '../status-error.js';
import type { AdmissionChain } from './admission-chain.js';

export interface AdmittedWriteRequest {
  type: ResourceType;
  version: string;
  namespace: string;
  /** The object's name from the URL; none for a create by POST. */
  name: string | undefined;
  opts: WriteOptions;
  /** `CreateOptions`, `UpdateOptions` or `PatchOptions`: the kind of `request.options`. */
  optionsKind: string;
}

export interface AdmittedWriteResult {
  object: KubeObject;
  warnings: string[];
}

/**
 * A create or update through the admission chain. The service first works the write out as a dry
 * run (defaults, validation, managed fields), the webhooks see and patch that object, and the
 * admitted object is stored only if nothing else changed it meanwhile (409 otherwise). With no
 * webhook configuration stored, the write goes straight to the service.
 */
export async function admittedWrite(
  chain: AdmissionChain,
  service: ResourceService,
  request: AdmittedWriteRequest,
  write: (opts: WriteOptions) => KubeObject,
): Promise<AdmittedWriteResult> {
  const { type, version, opts } = request;
  // kube never sends its own webhook configurations to webhooks, so that a bad webhook cannot lock itself in.
  if (type.group === 'admissionregistration.k8s.io' || !chain.hasConfigurations()) return { object: write(opts), warnings: [] };
  const key = storageKey(type);
  const namespace = type.namespaced ? request.namespace : '';
  const stored = request.name === undefined ? undefined : service.store.get(key, namespace, request.name);
  const old = stored ? (service.present(stored, type, version) as JsonObject) : undefined;
  const candidate = write({ ...opts, dryRun: true }) as JsonObject;
  const name = String((candidate['metadata'] as JsonObject)['name'] ?? '');
  const dryRun = opts.dryRun === true;
  const { object, warnings } = await chain.admit({
    operation: old ? 'UPDATE' : 'CREATE',
    group: type.group,
    version,
    kind: type.kind,
    resource: type.plural,
    subresource: opts.subresource ?? '',
    namespaced: type.namespaced,
    namespace,
    name,
    object: candidate,
    oldObject: old,
    dryRun,
    user: opts.user ?? ADMIN_USER,
    options: {
      apiVersion: 'meta.k8s.io/v1',
      kind: request.optionsKind,
      ...(dryRun ? { dryRun: ['All'] } : {}),
      ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}),
      ...(opts.force ? { force: true } : {}),
    },
  });
  const admitted = withGenerationFor(old, candidate, withIdentityOf(candidate, object));
  if (dryRun) return { object: admitted as KubeObject, warnings };
  return { object: commit(service, type, version, namespace, name, old, admitted), warnings };
}

/** Webhook patches may not move or re-identify the object: the fields the store keys and versions on stay. */
function withIdentityOf(candidate: JsonObject, admitted: JsonObject): JsonObject {
  const result = clone(admitted);
  const from = candidate['metadata'] as JsonObject;
  const metadata = (result['metadata'] && typeof result['metadata'] === 'object' ? result['metadata'] : {}) as JsonObject;
  result['metadata'] = metadata;
  result['apiVersion'] = candidate['apiVersion'];
  result['kind'] = candidate['kind'];
  for (const field of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) {
    if (from[field] === undefined) delete metadata[field];
    else metadata[field] = from[field];
  }
  return result;
}

/** The generation counts spec changes, a webhook's included: bumped once when only the webhook changed the spec. */
function withGenerationFor(old: JsonObject | undefined, candidate: JsonObject, admitted: JsonObject): JsonObject {
  const generationOf = (object: JsonObject): unknown => (object['metadata'] as JsonObject)['generation'];
  if (!old || deepEqual(specPart(candidate), specPart(admitted)) || generationOf(candidate) !== generationOf(old)) return admitted;
  (admitted['metadata'] as JsonObject)['generation'] = Number(generationOf(old) ?? 1) + 1;
  return admitted;
}

function specPart(object: JsonObject): JsonObject {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

function commit(
  service: ResourceService,
  type: ResourceType,
  version: string,
  namespace: string,
  name: string,
  old: JsonObject | undefined,
  admitted: JsonObject,
): KubeObject {
  const key = storageKey(type);
  const current = service.store.get(key, namespace, name);
  if (!old && current) throw alreadyExists(type.group, type.plural, name);
  if (old && !current) throw notFound(type.group, type.plural, name);
  const oldMeta = old?.['metadata'] as JsonObject | undefined;
  if (old && current?.metadata?.resourceVersion !== oldMeta?.['resourceVersion']) throw conflict(type.group, type.plural, name, STALE_OBJECT_MESSAGE);
  if (old && deepEqual(old, admitted)) return old as KubeObject;
  const metadata = admitted['metadata'] as JsonObject;
  const finalizers = metadata['finalizers'];
  if (old && metadata['deletionTimestamp'] && (!Array.isArray(finalizers) || finalizers.length === 0)) {
    return service.present(service.store.remove(key, namespace, name, admitted as KubeObject) as KubeObject, type, version);
  }
  const written = service.store.put(key, admitted as KubeObject);
  if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') service.registry.register(crdResourceType(admitted));
  return service.present(written, type, version);
}
