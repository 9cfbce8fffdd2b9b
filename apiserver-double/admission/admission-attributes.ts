import type { RequestUser } from '../kind-defaults.js';
import type { JsonObject } from '../object-util.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE';

/** What the admission chain knows of one write: kube's admission.Attributes. */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  group: string;
  version: string;
  kind: string;
  /** The plural, as in rules and `request.resource`. */
  resource: string;
  /** `status`, … or '' for the main resource. */
  subresource: string;
  namespaced: boolean;
  /** '' for cluster-scoped objects. */
  namespace: string;
  name: string;
  object: JsonObject;
  oldObject: JsonObject | undefined;
  dryRun: boolean;
  user: RequestUser;
  /** CreateOptions, UpdateOptions or PatchOptions, as `request.options`. */
  options: JsonObject;
}

/** The labels of an object's metadata. */
export function labelsOf(object: JsonObject | undefined): Record<string, string> {
  const metadata = object?.['metadata'];
  const labels = metadata && typeof metadata === 'object' ? (metadata as JsonObject)['labels'] : undefined;
  return labels && typeof labels === 'object' ? (labels as Record<string, string>) : {};
}
