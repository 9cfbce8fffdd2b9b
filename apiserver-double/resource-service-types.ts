import type { KubeObject } from '../runtime/index.js';
import type { FieldRequirement } from './field-selector.js';
import type { RequestUser } from './kind-defaults.js';
import type { LabelRequirement } from './label-selector.js';

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

export interface WriteOptions {
  /** `fieldManager` query parameter; otherwise derived from the user agent. */
  fieldManager?: string;
  userAgent?: string;
  dryRun?: boolean;
  force?: boolean;
  subresource?: string;
  user?: RequestUser;
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export type DeleteResult = { kind: 'deleted'; object: KubeObject } | { kind: 'pending'; object: KubeObject };

/** Selectors of a list or watch, parsed once. */
export interface Selectors {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
