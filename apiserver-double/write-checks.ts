import { clone, isPlainObject, type JsonObject } from './object-util.js';
import { apiVersionOf, hasStatus, type ResourceType } from './resource-type.js';
import { badRequest } from './status-error.js';

// What a write's body may be and change: pure checks of the resource service.

/** What a write through the main resource or a subresource is allowed to change. */
export function mergeForSubresource(type: ResourceType, before: JsonObject, incoming: JsonObject, subresource: string | undefined): JsonObject {
  if (subresource === 'status') return { ...clone(before), status: clone(incoming['status']) };
  if (subresource === 'approval') {
    const status = isPlainObject(before['status']) ? clone(before['status']) : {};
    const incomingStatus = isPlainObject(incoming['status']) ? incoming['status'] : {};
    status['conditions'] = clone(incomingStatus['conditions']);
    return { ...clone(before), status };
  }
  if (subresource === 'finalize') {
    const spec = isPlainObject(before['spec']) ? clone(before['spec']) : {};
    spec['finalizers'] = clone((incoming['spec'] as JsonObject | undefined)?.['finalizers']);
    return { ...clone(before), spec };
  }
  const next = clone(incoming);
  if (hasStatus(type)) {
    if (before['status'] === undefined) delete next['status'];
    else next['status'] = clone(before['status']);
  }
  return next;
}

/** Checks apiVersion/kind against the URL and returns a copy with a metadata map. */
export function checkBody(type: ResourceType, version: string, body: unknown): JsonObject {
  if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON object');
  const object = clone(body);
  const expected = apiVersionOf(type.group, version);
  if (object['apiVersion'] !== undefined && object['apiVersion'] !== expected) {
    throw badRequest(`the API version in the data (${String(object['apiVersion'])}) does not match the expected API version (${expected})`);
  }
  if (object['kind'] !== undefined && object['kind'] !== type.kind) {
    throw badRequest(`the kind in the data (${String(object['kind'])}) does not match the expected kind (${type.kind})`);
  }
  if (!isPlainObject(object['metadata'])) object['metadata'] = {};
  return object;
}

export function checkNamespace(type: ResourceType, namespace: string, metadata: JsonObject): void {
  if (!type.namespaced) {
    delete metadata['namespace'];
    return;
  }
  if (metadata['namespace'] !== undefined && metadata['namespace'] !== '' && metadata['namespace'] !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  metadata['namespace'] = namespace;
}
