import { isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';
import { schemaListStrategy } from '../kube-patch/index.js';
import { compareKubeVersions, STANDARD_VERBS } from './resource-type.js';
import type { PrinterColumn, ResourceType } from './resource-type.js';
import type { FieldError } from './status-error.js';

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: unknown; scale?: unknown };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

interface CrdSpec {
  group?: string;
  scope?: string;
  names?: { plural?: string; singular?: string; kind?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
  versions?: CrdVersion[];
}

function specOf(crd: JsonObject): CrdSpec {
  return (isPlainObject(crd['spec']) ? crd['spec'] : {}) as CrdSpec;
}

/** The checks the API server makes before it accepts a CustomResourceDefinition. */
export function validateCrd(crd: JsonObject): FieldError[] {
  const spec = specOf(crd);
  const errors: FieldError[] = [];
  const name = (crd['metadata'] as JsonObject | undefined)?.['name'];
  if (!spec.group) errors.push({ field: 'spec.group', type: 'FieldValueRequired', detail: '' });
  else if (!spec.group.includes('.'))
    errors.push({ field: 'spec.group', type: 'FieldValueInvalid', value: spec.group, detail: 'should be a domain with at least one dot' });
  if (!spec.names?.plural) errors.push({ field: 'spec.names.plural', type: 'FieldValueRequired', detail: '' });
  if (!spec.names?.kind) errors.push({ field: 'spec.names.kind', type: 'FieldValueRequired', detail: '' });
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    errors.push({ field: 'spec.scope', type: 'FieldValueNotSupported', value: spec.scope ?? '', detail: 'supported values: "Cluster", "Namespaced"' });
  }
  if (spec.group && spec.names?.plural && name !== `${spec.names.plural}.${spec.group}`) {
    errors.push({ field: 'metadata.name', type: 'FieldValueInvalid', value: name, detail: `must be spec.names.plural+"."+spec.group` });
  }
  const versions = spec.versions ?? [];
  if (versions.length === 0)
    errors.push({ field: 'spec.versions', type: 'FieldValueInvalid', value: [], detail: 'must have exactly one version marked as storage version' });
  else if (versions.filter((v) => v.storage).length !== 1) {
    errors.push({
      field: 'spec.versions',
      type: 'FieldValueInvalid',
      value: versions.map((v) => v.name),
      detail: 'must have exactly one version marked as storage version',
    });
  }
  return errors;
}

/** The served kind a valid CRD declares. */
export function crdResourceType(crd: JsonObject): ResourceType {
  const spec = specOf(crd);
  const names = spec.names ?? {};
  const versions = spec.versions ?? [];
  const storage = versions.find((v) => v.storage) ?? versions[0];
  const served = versions.filter((v) => v.served !== false).map((v) => v.name);
  const kind = names.kind ?? '';
  return {
    group: spec.group ?? '',
    versions: [...served].sort(compareKubeVersions),
    kind,
    listKind: names.listKind ?? `${kind}List`,
    plural: names.plural ?? '',
    singular: names.singular ?? kind.toLowerCase(),
    namespaced: spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: STANDARD_VERBS,
    subresources: storage?.subresources?.status !== undefined ? ['status'] : [],
    custom: true,
    printerColumns: storage?.additionalPrinterColumns ?? [],
    listStrategy: schemaListStrategy(storage?.schema?.openAPIV3Schema),
    selectableFields: (storage?.selectableFields ?? []).map((f) => f.jsonPath.replace(/^\./, '')),
    deleteReturnsObject: true,
    nameRule: 'subdomain',
    ephemeral: false,
  };
}

/** The status the CRD controllers would settle on: names accepted and established. */
export function crdStatus(crd: JsonObject, previous: unknown, now: string): JsonObject {
  const spec = specOf(crd);
  const names = spec.names ?? {};
  const kind = names.kind ?? '';
  const before = isPlainObject(previous) ? previous : {};
  const storedBefore = Array.isArray(before['storedVersions']) ? (before['storedVersions'] as string[]) : [];
  const storage = (spec.versions ?? []).find((v) => v.storage)?.name;
  const storedVersions = storage && !storedBefore.includes(storage) ? [...storedBefore, storage] : storedBefore;
  const oldConditions = Array.isArray(before['conditions']) ? (before['conditions'] as JsonObject[]) : [];
  const condition = (type: string, reason: string, message: string): JsonObject => ({
    type,
    status: 'True',
    lastTransitionTime: oldConditions.find((c) => c['type'] === type && c['status'] === 'True')?.['lastTransitionTime'] ?? now,
    reason,
    message,
  });
  return {
    acceptedNames: {
      plural: names.plural,
      singular: names.singular ?? kind.toLowerCase(),
      kind,
      listKind: names.listKind ?? `${kind}List`,
      ...(names.shortNames ? { shortNames: names.shortNames } : {}),
      ...(names.categories ? { categories: names.categories } : {}),
    },
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions,
  };
}

/** Fills the defaults the API server writes into a CRD spec. */
export function defaultCrd(crd: JsonObject): void {
  const spec = specOf(crd);
  if (spec.names) {
    if (!spec.names.singular && spec.names.kind) spec.names.singular = spec.names.kind.toLowerCase();
    if (!spec.names.listKind && spec.names.kind) spec.names.listKind = `${spec.names.kind}List`;
  }
  (spec as JsonObject)['conversion'] ??= { strategy: 'None' };
}
