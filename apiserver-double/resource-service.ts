import { randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { errorMessage, type Clock, type KubeObject } from '../runtime/index.js';
import { crdResourceType, crdStatus, defaultCrd, validateCrd } from './crd-registration.js';
import { matchesFieldSelector, parseFieldSelector } from './field-selector.js';
import { applyJsonPatch, JsonPatchError } from './json-patch.js';
import { ADMIN_USER, KindDefaults } from './kind-defaults.js';
import { matchesLabelSelector, parseLabelSelector } from './label-selector.js';
import { readOwnership, trackUpdate } from './managed-fields.js';
import type { ManagedFieldsEntry, WriteContext } from './managed-fields.js';
import { applyMergePatch } from './merge-patch.js';
import { type ObjectStore, RevisionCompactedError, RevisionTooLargeError } from './object-store.js';
import { clone, deepEqual, generateNameSuffix, isPlainObject, kubeTimestamp, nameProblem } from './object-util.js';
import type { JsonObject } from './object-util.js';
import { type ResourceRegistry, storageKey } from './resource-registry.js';
import { apiVersionOf, hasStatus, parseApiVersion } from './resource-type.js';
import type { ResourceType } from './resource-type.js';
import { serverSideApply } from './server-side-apply.js';
import { checkBody, checkNamespace, mergeForSubresource } from './write-checks.js';
import { applyStrategicMergePatch } from '../kube-patch/index.js';
import { alreadyExists, badRequest, conflict, gone, invalid, notFound, STALE_OBJECT_MESSAGE, StatusError } from './status-error.js';

import {
  DEFAULT_NAMESPACES,
  type DeleteOptions,
  type DeleteResult,
  type ListQuery,
  type ListResult,
  type PatchType,
  type Selectors,
  type WriteOptions,
} from './resource-service-types.js';
import { decodeContinue, encodeContinue, managerFromUserAgent, parseRevision } from './request-parameters.js';

export { managerFromUserAgent, parseRevision } from './request-parameters.js';
export {
  DEFAULT_NAMESPACES,
  PATCH_CONTENT_TYPES,
  type DeleteOptions,
  type DeleteResult,
  type ListQuery,
  type ListResult,
  type PatchType,
  type Selectors,
  type WriteOptions,
} from './resource-service-types.js';

/**
 * The verbs over stored objects with the API server's semantics: names, uids, generations,
 * resource version preconditions, status subresource rules, finalizers, namespace cascade,
 * CRD registration, patches and server-side apply. HTTP lives elsewhere.
 */
export class ResourceService {
  private readonly defaults = new KindDefaults();

  constructor(
    readonly store: ObjectStore,
    readonly registry: ResourceRegistry,
    private readonly clock: Clock,
  ) {}

  /** Creates the namespaces a fresh cluster has. */
  bootstrap(): void {
    const type = this.requireType('', 'namespaces');
    for (const name of DEFAULT_NAMESPACES) this.create(type, 'v1', '', { metadata: { name } }, { fieldManager: 'kube-apiserver' });
  }

  requireType(group: string, plural: string): ResourceType {
    const type = this.registry.byGroupResource(group, plural);
    if (!type) throw new Error(`resource ${plural}.${group} is not registered`);
    return type;
  }

  parseSelectors(type: ResourceType, labelSelector: string | undefined, fieldSelector: string | undefined): Selectors {
    const allowed = ['metadata.name', 'metadata.namespace', ...type.selectableFields];
    return {
      labels: parseLabelSelector(labelSelector ?? ''),
      fields: parseFieldSelector(fieldSelector ?? '', allowed),
    };
  }

  matches(selectors: Selectors, object: KubeObject): boolean {
    return (
      matchesLabelSelector(selectors.labels, object.metadata?.labels) &&
      matchesFieldSelector(selectors.fields, { ...object, metadata: { namespace: '', ...object.metadata } })
    );
  }

  /** An object as a client at `version` sees it. */
  present(object: KubeObject, type: ResourceType, version: string): KubeObject {
    const { apiVersion: _apiVersion, kind: _kind, ...rest } = clone(object);
    return { apiVersion: apiVersionOf(type.group, version), kind: type.kind, ...rest };
  }

  get(type: ResourceType, version: string, namespace: string, name: string): KubeObject {
    const found = this.store.get(storageKey(type), type.namespaced ? namespace : '', name);
    if (!found) throw notFound(type.group, type.plural, name);
    return this.present(found, type, version);
  }

  list(type: ResourceType, version: string, namespace: string | undefined, query: ListQuery): ListResult {
    const selectors = this.parseSelectors(type, query.labelSelector, query.fieldSelector);
    const key = storageKey(type);
    let revision = this.store.currentRevision();
    let after = '';
    if (query.continue) {
      const token = decodeContinue(query.continue);
      revision = token.rv;
      after = token.start;
    } else if (query.resourceVersion && query.resourceVersion !== '0') {
      const requested = parseRevision(query.resourceVersion);
      if (query.resourceVersionMatch === 'Exact') revision = requested;
      else if (requested > revision) throw tooLarge(requested, revision);
    }
    let objects: KubeObject[];
    try {
      objects = revision === this.store.currentRevision() ? this.store.list(key, namespace) : this.store.listAt(key, revision, namespace);
    } catch (err) {
      if (err instanceof RevisionCompactedError) {
        throw query.continue
          ? gone(
              'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
            )
          : gone(`too old resource version: ${err.requested} (${err.oldest})`);
      }
      if (err instanceof RevisionTooLargeError) throw tooLarge(err.requested, err.current);
      throw err;
    }
    const matching = objects.filter((o) => this.matches(selectors, o) && (!after || objectOrderKey(o) > after));
    const limit = query.limit && query.limit > 0 ? query.limit : matching.length;
    const page = matching.slice(0, limit);
    const rest = matching.length - page.length;
    const result: ListResult = {
      items: page.map((o) => this.present(o, type, version)),
      resourceVersion: String(revision),
    };
    const last = page[page.length - 1];
    if (rest > 0 && last) {
      result.continue = encodeContinue(revision, objectOrderKey(last));
      result.remainingItemCount = rest;
    }
    return result;
  }

  create(type: ResourceType, version: string, namespace: string, body: unknown, opts: WriteOptions): KubeObject {
    const object = checkBody(type, version, body);
    const metadata = object['metadata'] as JsonObject;
    checkNamespace(type, namespace, metadata);
    if (!metadata['name'] && typeof metadata['generateName'] === 'string' && metadata['generateName']) {
      metadata['name'] = `${metadata['generateName']}${generateNameSuffix()}`;
    }
    return this.createObject(type, version, object, opts, undefined);
  }

  /** Full replacement (PUT) of an object or of its status/approval subresource. */
  update(type: ResourceType, version: string, namespace: string, name: string, body: unknown, opts: WriteOptions): KubeObject {
    const incoming = checkBody(type, version, body);
    const metadata = incoming['metadata'] as JsonObject;
    checkNamespace(type, namespace, metadata);
    if (metadata['name'] !== undefined && metadata['name'] !== name) {
      throw badRequest(`the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`);
    }
    metadata['name'] = name;
    const existing = this.store.get(storageKey(type), type.namespaced ? namespace : '', name);
    if (!existing) throw notFound(type.group, type.plural, name);
    const rv = metadata['resourceVersion'];
    if (rv !== undefined && rv !== '' && rv !== existing.metadata?.resourceVersion) {
      throw conflict(type.group, type.plural, name, STALE_OBJECT_MESSAGE);
    }
    if ((rv === undefined || rv === '') && type.custom) {
      throw invalid(type.group, type.kind, name, [
        { field: 'metadata.resourceVersion', type: 'FieldValueInvalid', value: 0, detail: 'must be specified for an update' },
      ]);
    }
    return this.updateObject(type, version, existing as JsonObject, incoming, opts, undefined);
  }

  patch(type: ResourceType, version: string, namespace: string, name: string, patchType: PatchType, rawBody: string, opts: WriteOptions): KubeObject {
    const ns = type.namespaced ? namespace : '';
    const existing = this.store.get(storageKey(type), ns, name) as JsonObject | undefined;
    if (patchType === 'apply') return this.apply(type, version, ns, name, existing, rawBody, opts);
    if (!existing) throw notFound(type.group, type.plural, name);
    const current = this.present(existing, type, version);
    let patched: unknown;
    try {
      const patchBody = JSON.parse(rawBody) as unknown;
      if (patchType === 'json') patched = applyJsonPatch(current, patchBody);
      else if (!isPlainObject(patchBody)) throw badRequest('the patch must be a JSON object');
      else if (patchType === 'merge') patched = applyMergePatch(current, patchBody);
      else patched = applyStrategicMergePatch(current, patchBody, type.listStrategy);
    } catch (err) {
      if (err instanceof SyntaxError) throw badRequest(`error decoding patch: ${err.message}`);
      if (err instanceof JsonPatchError) throw new StatusError(422, 'Invalid', err.message);
      throw err;
    }
    if (!isPlainObject(patched)) throw badRequest('the patched object is not a JSON object');
    const metadata = isPlainObject(patched['metadata']) ? patched['metadata'] : {};
    patched['metadata'] = metadata;
    if (metadata['name'] !== name) throw badRequest(`metadata.name: Invalid value: "${String(metadata['name'])}": field is immutable`);
    const rv = metadata['resourceVersion'];
    if (rv !== undefined && rv !== '' && rv !== (existing['metadata'] as JsonObject)['resourceVersion']) {
      throw conflict(type.group, type.plural, name, STALE_OBJECT_MESSAGE);
    }
    const incoming = checkBody(type, version, patched);
    return this.updateObject(type, version, existing, incoming, opts, undefined);
  }

  delete(type: ResourceType, version: string, namespace: string, name: string, opts: DeleteOptions): DeleteResult {
    const key = storageKey(type);
    const ns = type.namespaced ? namespace : '';
    const existing = this.store.get(key, ns, name);
    if (!existing) throw notFound(type.group, type.plural, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== existing.metadata?.uid) {
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata?.uid ?? ''}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== existing.metadata?.resourceVersion) {
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata?.resourceVersion ?? ''}`,
      );
    }
    if (opts.dryRun) return { kind: 'deleted', object: this.present(existing, type, version) };
    const finalizers = existing.metadata?.['finalizers'];
    if (Array.isArray(finalizers) && finalizers.length > 0) {
      if (existing.metadata?.['deletionTimestamp']) return { kind: 'pending', object: this.present(existing, type, version) };
      const marked = clone(existing);
      marked.metadata = { ...marked.metadata, deletionTimestamp: kubeTimestamp(this.clock.now()), deletionGracePeriodSeconds: 0 };
      return { kind: 'pending', object: this.present(this.store.put(key, marked), type, version) };
    }
    if (type.group === '' && type.plural === 'namespaces') return { kind: 'deleted', object: this.deleteNamespace(type, version, existing) };
    if (type.group === 'apiextensions.k8s.io' && type.plural === 'customresourcedefinitions') this.deleteCustomResources(existing as JsonObject);
    const removed = this.store.remove(key, ns, name) as KubeObject;
    if (type.group === 'apiextensions.k8s.io' && type.plural === 'customresourcedefinitions') this.unregisterCrd(existing as JsonObject);
    return { kind: 'deleted', object: this.present(removed, type, version) };
  }

  /** Every object of the kind in the namespace (or all) that the selectors match. */
  deleteCollection(type: ResourceType, version: string, namespace: string | undefined, selectors: Selectors, opts: DeleteOptions): void {
    for (const object of this.store.list(storageKey(type), namespace)) {
      if (!this.matches(selectors, object)) continue;
      this.delete(type, version, object.metadata?.namespace ?? '', object.metadata?.name ?? '', opts);
    }
  }

  private apply(
    type: ResourceType,
    version: string,
    namespace: string,
    name: string,
    existing: JsonObject | undefined,
    rawBody: string,
    opts: WriteOptions,
  ): KubeObject {
    if (!opts.fieldManager) {
      throw invalid('meta.k8s.io', 'PatchOptions', '', [{ field: 'fieldManager', type: 'FieldValueRequired', detail: 'is required for apply patch' }]);
    }
    let applied: unknown;
    try {
      applied = parseYaml(rawBody);
    } catch (err) {
      throw badRequest(`error decoding YAML: ${errorMessage(err)}`);
    }
    if (!isPlainObject(applied)) throw badRequest('the apply configuration must be an object');
    const { group, version: appliedVersion } = parseApiVersion(String(applied['apiVersion'] ?? ''));
    if (!applied['apiVersion'] || !applied['kind']) {
      throw badRequest('apiVersion and kind are required in an apply configuration');
    }
    if (group !== type.group || appliedVersion !== version || applied['kind'] !== type.kind) {
      throw badRequest(
        `the apply configuration (${String(applied['apiVersion'])}, Kind=${String(applied['kind'])}) does not match the resource (${apiVersionOf(type.group, version)}, Kind=${type.kind})`,
      );
    }
    const metadata = isPlainObject(applied['metadata']) ? applied['metadata'] : {};
    applied['metadata'] = metadata;
    if (metadata['name'] !== undefined && metadata['name'] !== name) {
      throw badRequest(`the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`);
    }
    metadata['name'] = name;
    if (type.namespaced) {
      if (metadata['namespace'] !== undefined && metadata['namespace'] !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      metadata['namespace'] = namespace;
    }
    if (!existing && opts.subresource) throw notFound(type.group, type.plural, name);
    const ctx = this.writeContext(type, version, opts);
    const live = existing ? (this.present(existing, type, version) as JsonObject) : undefined;
    const outcome = serverSideApply(live, applied, opts.force === true, ctx);
    if (!outcome.ok) {
      const n = outcome.conflicts.length;
      const byManager = outcome.conflicts.map((c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${c.field}`);
      const message = n === 1 ? `Apply failed with 1 conflict: ${byManager[0] ?? ''}` : `Apply failed with ${n} conflicts: ${byManager.join('\n')}`;
      throw new StatusError(409, 'Conflict', message, {
        name,
        ...(type.group ? { group: type.group } : {}),
        kind: type.plural,
        causes: outcome.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: c.field })),
      });
    }
    if (!existing) {
      checkNamespace(type, namespace, outcome.object['metadata'] as JsonObject);
      return this.createObject(type, version, checkBody(type, version, outcome.object), opts, outcome.managedFields);
    }
    return this.updateObject(type, version, existing, checkBody(type, version, outcome.object), opts, outcome.managedFields);
  }

  private createObject(
    type: ResourceType,
    version: string,
    object: JsonObject,
    opts: WriteOptions,
    managedFields: ManagedFieldsEntry[] | undefined,
  ): KubeObject {
    const metadata = object['metadata'] as JsonObject;
    const name = metadata['name'];
    if (typeof name !== 'string' || name === '') {
      throw invalid(type.group, type.kind, '', [{ field: 'metadata.name', type: 'FieldValueRequired', detail: 'name or generateName is required' }]);
    }
    const problem = nameProblem(name, type.nameRule);
    if (problem) throw invalid(type.group, type.kind, name, [{ field: 'metadata.name', type: 'FieldValueInvalid', value: name, detail: problem }]);
    const key = storageKey(type);
    const namespace = type.namespaced ? String(metadata['namespace']) : '';
    if (this.store.get(key, namespace, name)) throw alreadyExists(type.group, type.plural, name);
    if (type.namespaced) {
      const ns = this.store.get('/namespaces', '', namespace);
      if (!ns) throw notFound('', 'namespaces', namespace);
      if (ns.metadata?.['deletionTimestamp']) {
        throw new StatusError(
          403,
          'Forbidden',
          `${type.plural} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        );
      }
    }
    if (hasStatus(type)) delete object['status'];
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink']) {
      delete metadata[field];
    }
    metadata['uid'] = randomUUID();
    metadata['creationTimestamp'] = kubeTimestamp(this.clock.now());
    metadata['generation'] = 1;
    this.defaults.onCreate(type, object, opts.user ?? ADMIN_USER);
    if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') {
      const errors = validateCrd(object);
      if (errors.length > 0) throw invalid(type.group, type.kind, name, errors);
      defaultCrd(object);
      object['status'] = crdStatus(object, undefined, kubeTimestamp(this.clock.now()));
    }
    const ctx = this.writeContext(type, version, opts);
    metadata['managedFields'] = managedFields ?? trackUpdate(undefined, object, [], ctx);
    if ((metadata['managedFields'] as unknown[]).length === 0) delete metadata['managedFields'];
    const stored = { ...object, apiVersion: apiVersionOf(type.group, version), kind: type.kind } as KubeObject;
    if (opts.dryRun) return this.present(stored, type, version);
    const written = this.store.put(key, stored);
    if (type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition') this.registry.register(crdResourceType(object));
    return this.present(written, type, version);
  }

  private updateObject(
    type: ResourceType,
    version: string,
    existing: JsonObject,
    incoming: JsonObject,
    opts: WriteOptions,
    managedFields: ManagedFieldsEntry[] | undefined,
  ): KubeObject {
    const key = storageKey(type);
    const before = this.present(existing, type, version) as JsonObject;
    const next = mergeForSubresource(type, before, incoming, opts.subresource);
    const metadata = next['metadata'] as JsonObject;
    const oldMeta = before['metadata'] as JsonObject;
    for (const field of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'namespace', 'name', 'generation']) {
      if (oldMeta[field] === undefined) delete metadata[field];
      else metadata[field] = oldMeta[field];
    }
    metadata['resourceVersion'] = oldMeta['resourceVersion'];
    this.defaults.onUpdate(type, next, before);
    const isCrd = type.group === 'apiextensions.k8s.io' && type.kind === 'CustomResourceDefinition';
    if (isCrd && !opts.subresource) {
      const errors = validateCrd(next);
      if (errors.length > 0) throw invalid(type.group, type.kind, String(metadata['name']), errors);
      defaultCrd(next);
      next['status'] = crdStatus(next, before['status'], kubeTimestamp(this.clock.now()));
    }
    if (!deepEqual(specPart(before), specPart(next))) metadata['generation'] = Number(oldMeta['generation'] ?? 1) + 1;
    const ctx = this.writeContext(type, version, opts);
    metadata['managedFields'] = managedFields ?? trackUpdate(before, next, readOwnership(before), ctx);
    if ((metadata['managedFields'] as unknown[]).length === 0) delete metadata['managedFields'];
    if (deepEqual(withoutManagedTimes(before), withoutManagedTimes(next))) return before;
    if (opts.dryRun) return this.present(next, type, version);
    const finalizers = metadata['finalizers'];
    const ns = type.namespaced ? String(metadata['namespace']) : '';
    if (metadata['deletionTimestamp'] && (!Array.isArray(finalizers) || finalizers.length === 0)) {
      return this.present(this.store.remove(key, ns, String(metadata['name']), next as KubeObject) as KubeObject, type, version);
    }
    const written = this.store.put(key, next);
    if (isCrd) this.registry.register(crdResourceType(next));
    return this.present(written, type, version);
  }

  private writeContext(type: ResourceType, version: string, opts: WriteOptions): WriteContext {
    return {
      manager: opts.fieldManager ?? managerFromUserAgent(opts.userAgent),
      apiVersion: apiVersionOf(type.group, version),
      time: kubeTimestamp(this.clock.now()),
      ...(opts.subresource ? { subresource: opts.subresource } : {}),
      lists: type.listStrategy,
      scope: opts.subresource === 'status' ? 'status' : hasStatus(type) ? 'main' : 'all',
    };
  }

  private deleteNamespace(type: ResourceType, version: string, namespace: KubeObject): KubeObject {
    const name = namespace.metadata?.name ?? '';
    const terminating = clone(namespace) as JsonObject;
    terminating['metadata'] = { ...(terminating['metadata'] as JsonObject), deletionTimestamp: kubeTimestamp(this.clock.now()) };
    terminating['status'] = { ...(isPlainObject(terminating['status']) ? terminating['status'] : {}), phase: 'Terminating' };
    const marked = this.store.put('/namespaces', terminating as KubeObject);
    for (const contained of this.registry.all()) {
      if (!contained.namespaced) continue;
      for (const object of this.store.list(storageKey(contained), name)) {
        this.store.remove(storageKey(contained), name, object.metadata?.name ?? '');
      }
    }
    this.store.remove('/namespaces', '', name);
    return this.present(marked, type, version);
  }

  private deleteCustomResources(crd: JsonObject): void {
    const spec = crd['spec'] as JsonObject | undefined;
    const group = String(spec?.['group'] ?? '');
    const plural = String((spec?.['names'] as JsonObject | undefined)?.['plural'] ?? '');
    const key = `${group}/${plural}`;
    for (const object of this.store.list(key)) this.store.remove(key, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
  }

  private unregisterCrd(crd: JsonObject): void {
    const spec = crd['spec'] as JsonObject | undefined;
    this.registry.unregister(String(spec?.['group'] ?? ''), String((spec?.['names'] as JsonObject | undefined)?.['plural'] ?? ''));
  }
}

/** Everything generation tracks: all but metadata and status. */
function specPart(object: JsonObject): JsonObject {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = object;
  return rest;
}

function withoutManagedTimes(object: JsonObject): JsonObject {
  const metadata = { ...(object['metadata'] as JsonObject) };
  const managed = metadata['managedFields'];
  if (Array.isArray(managed)) metadata['managedFields'] = managed.map((e) => ({ ...(e as JsonObject), time: '' }));
  return { ...object, metadata };
}

function objectOrderKey(object: KubeObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

function tooLarge(requested: number, current: number): StatusError {
  return new StatusError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
