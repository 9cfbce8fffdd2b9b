import type { ListStrategyResolver } from '../kube-patch/index.js';

export type { ListStrategy, ListStrategyResolver } from '../kube-patch/index.js';

/** A column of the `Table` that `kubectl get` prints. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  /** A simple JSONPath such as `.spec.mode` or `.status.conditions[0].type`. */
  jsonPath: string;
  /** Computes the cell instead of the path, for built-in columns such as a count of keys. */
  compute?: (object: Record<string, unknown>, nowMs: number) => unknown;
}

/** One served kind: everything the routes, discovery and the storage need to know about it. */
export interface ResourceType {
  group: string;
  /** Served versions, preferred first; the first is the storage version. */
  versions: string[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** `status`, `approval`, `token`, … */
  subresources: string[];
  /** Registered by a CustomResourceDefinition rather than built in. */
  custom: boolean;
  printerColumns: PrinterColumn[];
  listStrategy: ListStrategyResolver;
  /** Field selector keys beyond metadata.name and metadata.namespace. */
  selectableFields: string[];
  /** DELETE answers with the deleted object rather than a success Status. */
  deleteReturnsObject: boolean;
  /** How names are checked on create. */
  nameRule: 'subdomain' | 'label' | 'path';
  /** Create-only kinds (reviews) are computed and never stored. */
  ephemeral: boolean;
}

export const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `v1` for the core group, `group/version` otherwise. */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Splits `apps/v1` into group and version; `v1` is the core group. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function hasStatus(type: ResourceType): boolean {
  return type.subresources.includes('status');
}

/** Orders versions as Kubernetes does: GA before beta before alpha, higher numbers first. */
export function compareKubeVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const stability = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const ra = rank(a);
  const rb = rank(b);
  for (let i = 0; i < 3; i++) {
    const d = (ra[i] as number) - (rb[i] as number);
    if (d !== 0) return d;
  }
  return ra[3] < rb[3] ? -1 : ra[3] > rb[3] ? 1 : 0;
}
