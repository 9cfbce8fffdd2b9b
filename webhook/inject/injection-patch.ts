import jsonPatch, { type Operation } from 'fast-json-patch';
import { clone } from '../../kube-patch/index.js';
import type { Pod } from './pod.js';

/**
 * The RFC 6902 operations that turn the original pod into the injected one: the webhook's
 * `patch`. Managed fields are left out of both sides (the API server keeps its own; comparing
 * them only costs time).
 */
export function injectionPatch(original: Pod, injected: Pod): Operation[] {
  return jsonPatch.compare(withoutManagedFields(original), withoutManagedFields(injected));
}

function withoutManagedFields(pod: Pod): Pod {
  const copy = clone(pod);
  const metadata = copy['metadata'];
  if (typeof metadata === 'object' && metadata !== null) delete (metadata as Record<string, unknown>)['managedFields'];
  return copy;
}
