import { clone, deepEqual, isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';
import { formatFieldPath, leafFields, listKeyOf, parsePathKey, removeField } from './field-set.js';
import { isSameManager, readOwnership, writeOwnership } from './managed-fields.js';
import type { ManagedFieldsEntry, Ownership, WriteContext } from './managed-fields.js';
import type { ListStrategyResolver } from './resource-type.js';

/** A field another manager owns with a different value. */
export interface ApplyConflict {
  manager: string;
  apiVersion: string;
  field: string;
}

export type ApplyResult = { ok: true; object: JsonObject; managedFields: ManagedFieldsEntry[] } | { ok: false; conflicts: ApplyConflict[] };

/**
 * Server-side apply of `applied` (the manager's full intent) onto `live` (absent on create):
 * conflicts unless forced, removal of fields the manager stopped applying, a merge that follows
 * the list strategies, and the manager's Apply entry set to exactly the applied fields.
 */
export function serverSideApply(live: JsonObject | undefined, applied: JsonObject, force: boolean, ctx: WriteContext): ApplyResult {
  const owners = readOwnership(live);
  const appliedFields = leafFields(applied, ctx.lists, ctx.scope);
  const liveFields = live ? leafFields(live, ctx.lists, ctx.scope) : new Map<string, unknown>();
  const mine = owners.find((o) => isSameManager(o, ctx.manager, 'Apply', ctx.subresource));

  const conflicts: { owner: Ownership; key: string }[] = [];
  for (const owner of owners) {
    if (owner === mine) continue;
    for (const key of owner.fields) {
      if (!appliedFields.has(key)) continue;
      if (!liveFields.has(key) || !deepEqual(liveFields.get(key), appliedFields.get(key))) conflicts.push({ owner, key });
    }
  }
  if (conflicts.length > 0 && !force) {
    return {
      ok: false,
      conflicts: conflicts.map((c) => ({ manager: c.owner.entry.manager, apiVersion: c.owner.entry.apiVersion, field: formatFieldPath(parsePathKey(c.key)) })),
    };
  }
  for (const c of conflicts) c.owner.fields.delete(c.key);

  const result: JsonObject = live ? clone(live) : {};
  if (mine) {
    const ownedByOthers = new Set<string>();
    for (const owner of owners) if (owner !== mine) for (const key of owner.fields) ownedByOthers.add(key);
    const dropped = [...mine.fields].filter((k) => !appliedFields.has(k) && !ownedByOthers.has(k));
    // Deepest first, so removing an element does not hide the removal of its fields.
    for (const key of dropped.sort((a, b) => b.length - a.length)) removeField(result, parsePathKey(key));
  }
  const merged = applyMerge(result, applied, [], ctx.lists, ctx.scope) as JsonObject;

  const own: Ownership = mine ?? {
    entry: {
      manager: ctx.manager,
      operation: 'Apply',
      apiVersion: ctx.apiVersion,
      time: ctx.time,
      fieldsType: 'FieldsV1',
      ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
    },
    fields: new Set(),
  };
  own.entry = { ...own.entry, apiVersion: ctx.apiVersion, time: ctx.time };
  own.fields = new Set(appliedFields.keys());
  const next = mine ? owners : [...owners, own];
  return { ok: true, object: merged, managedFields: writeOwnership(next) };
}

function applyMerge(live: unknown, applied: unknown, names: string[], lists: ListStrategyResolver, scope: WriteContext['scope']): unknown {
  if (isPlainObject(applied)) {
    const result: JsonObject = isPlainObject(live) ? { ...live } : {};
    for (const [key, value] of Object.entries(applied)) {
      if (names.length === 0 && ((scope === 'main' && key === 'status') || (scope === 'status' && key !== 'status' && key !== 'metadata'))) {
        continue;
      }
      if (value === null || value === undefined) continue;
      result[key] = applyMerge(result[key], value, [...names, key], lists, scope);
    }
    return result;
  }
  if (Array.isArray(applied)) {
    const strategy = lists(names);
    const current = Array.isArray(live) ? live : [];
    if (strategy.type === 'set') {
      const out = [...current];
      for (const member of applied) if (!out.some((m) => deepEqual(m, member))) out.push(clone(member));
      return out;
    }
    if (strategy.type === 'map' && applied.every(isPlainObject)) {
      const out = [...current];
      for (const element of applied as JsonObject[]) {
        const key = listKeyOf(element, strategy.keys);
        const at = out.findIndex((e) => isPlainObject(e) && deepEqual(listKeyOf(e, strategy.keys), key));
        if (at >= 0) out[at] = applyMerge(out[at], element, names, lists, scope);
        else out.push(clone(element));
      }
      return out;
    }
  }
  return clone(applied);
}
