import { deepEqual, isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';
import { fromFieldsV1, leafFields, toFieldsV1 } from './field-set.js';
import type { FieldScope } from './field-set.js';
import type { ListStrategyResolver } from './resource-type.js';

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/** A managedFields entry with its fields decoded into path keys. */
export interface Ownership {
  entry: Omit<ManagedFieldsEntry, 'fieldsV1'>;
  fields: Set<string>;
}

export interface WriteContext {
  manager: string;
  apiVersion: string;
  time: string;
  /** `status` for writes through the status subresource. */
  subresource?: string;
  lists: ListStrategyResolver;
  scope: FieldScope;
}

export function readOwnership(object: JsonObject | undefined): Ownership[] {
  const metadata = object?.['metadata'];
  const raw = isPlainObject(metadata) ? metadata['managedFields'] : undefined;
  if (!Array.isArray(raw)) return [];
  return raw.filter(isPlainObject).map((e) => {
    const { fieldsV1, ...entry } = e as unknown as ManagedFieldsEntry;
    return { entry, fields: fromFieldsV1(fieldsV1) };
  });
}

export function writeOwnership(owners: Ownership[]): ManagedFieldsEntry[] {
  return owners
    .filter((o) => o.fields.size > 0)
    .map((o) => ({
      manager: o.entry.manager,
      operation: o.entry.operation,
      apiVersion: o.entry.apiVersion,
      time: o.entry.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(o.fields),
      ...(o.entry.subresource ? { subresource: o.entry.subresource } : {}),
    }));
}

export function isSameManager(o: Ownership, manager: string, operation: 'Apply' | 'Update', subresource: string | undefined): boolean {
  return o.entry.manager === manager && o.entry.operation === operation && (o.entry.subresource ?? '') === (subresource ?? '');
}

/**
 * Records a non-apply write (create, update, patch): the writer takes the fields it changed, and
 * other managers lose the fields that changed or disappeared.
 */
export function trackUpdate(previous: JsonObject | undefined, next: JsonObject, owners: Ownership[], ctx: WriteContext): ManagedFieldsEntry[] {
  const before = previous ? leafFields(previous, ctx.lists, ctx.scope) : new Map<string, unknown>();
  const after = leafFields(next, ctx.lists, ctx.scope);
  const changed = new Set<string>();
  for (const [key, value] of after) if (!before.has(key) || !deepEqual(before.get(key), value)) changed.add(key);
  const removed = [...before.keys()].filter((k) => !after.has(k));
  let own = owners.find((o) => isSameManager(o, ctx.manager, 'Update', ctx.subresource));
  for (const owner of owners) {
    if (owner === own) continue;
    for (const key of changed) owner.fields.delete(key);
    for (const key of removed) owner.fields.delete(key);
  }
  if (own) for (const key of removed) own.fields.delete(key);
  if (changed.size > 0) {
    if (!own) {
      own = {
        entry: {
          manager: ctx.manager,
          operation: 'Update',
          apiVersion: ctx.apiVersion,
          time: ctx.time,
          fieldsType: 'FieldsV1',
          ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
        },
        fields: new Set(),
      };
      owners.push(own);
    }
    own.entry = { ...own.entry, apiVersion: ctx.apiVersion, time: ctx.time };
    for (const key of changed) own.fields.add(key);
  }
  return writeOwnership(owners);
}
