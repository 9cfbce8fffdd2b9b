import { badRequest } from './status-error.js';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Parses `metadata.name=a,status.phase!=Running`; only `allowed` fields may be used. */
export function parseFieldSelector(selector: string, allowed: readonly string[]): FieldRequirement[] {
  if (selector.trim() === '') return [];
  return selector.split(',').map((part) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${part}'`);
    const field = m[1] as string;
    if (!allowed.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    return { field, operator: m[2] === '!=' ? '!=' : '=', value: unescapeValue(m[3] as string) };
  });
}

export function matchesFieldSelector(requirements: readonly FieldRequirement[], object: Record<string, unknown>): boolean {
  return requirements.every((r) => {
    const actual = fieldValue(object, r.field);
    return r.operator === '=' ? actual === r.value : actual !== r.value;
  });
}

function fieldValue(object: Record<string, unknown>, path: string): string {
  let node: unknown = object;
  for (const part of path.split('.')) {
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  }
  if (node === undefined || node === null) return '';
  return typeof node === 'string' ? node : JSON.stringify(node);
}

function unescapeValue(value: string): string {
  return value.replace(/\\([\\,=])/g, '$1');
}
