import jsonPatch, { type Operation } from 'fast-json-patch';
import type { Pod } from './pod.js';

/**
 * The RFC 6902 operations that turn the original pod into the injected one: the webhook's
 * `patch`. Managed fields are left out of both sides (the API server keeps its own; comparing
 * them only costs time).
 */
export function injectionPatch(original: Pod, injected: Pod): Operation[] {
  return jsonPatch.compare(withoutManagedFields(original), withoutManagedFields(injected));
}

/** `compare` only reads its inputs, so a shallow copy of the pod and its metadata is enough to leave the field out. */
function withoutManagedFields(pod: Pod): Pod {
  const metadata = pod['metadata'];
  if (typeof metadata !== 'object' || metadata === null || !Object.hasOwn(metadata, 'managedFields')) return pod;
  const { managedFields: _managedFields, ...rest } = metadata as Record<string, unknown>;
  return { ...pod, metadata: rest };
}
