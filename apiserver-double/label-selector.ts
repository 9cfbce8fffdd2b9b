import { badRequest } from './status-error.js';

export type LabelOperator = 'exists' | 'notexists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const KEY_CHAR = /[A-Za-z0-9._/-]/;
const VALUE_CHAR = /[A-Za-z0-9._-]/;

/**
 * Parses a label selector (`a=b,c!=d,e in (f,g),h notin (i),j,!k`) as the API server does.
 * Throws a BadRequest `StatusError` on bad syntax.
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  const requirements: LabelRequirement[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw badRequest(`unable to parse requirement: ${why} in label selector "${selector}"`);
  };
  const skipSpace = (): void => {
    while (i < selector.length && /\s/.test(selector[i] as string)) i++;
  };
  const read = (chars: RegExp): string => {
    const start = i;
    while (i < selector.length && chars.test(selector[i] as string)) i++;
    return selector.slice(start, i);
  };
  const readSet = (): string[] => {
    skipSpace();
    if (selector[i] !== '(') fail('expected "("');
    i++;
    const values: string[] = [];
    for (;;) {
      skipSpace();
      values.push(read(VALUE_CHAR));
      skipSpace();
      if (selector[i] === ',') {
        i++;
        continue;
      }
      if (selector[i] === ')') {
        i++;
        return values;
      }
      return fail('expected "," or ")"');
    }
  };

  skipSpace();
  if (i >= selector.length) return requirements;
  for (;;) {
    skipSpace();
    let negated = false;
    if (selector[i] === '!') {
      negated = true;
      i++;
      skipSpace();
    }
    const key = read(KEY_CHAR);
    if (!key) fail('found no key');
    skipSpace();
    if (negated) {
      requirements.push({ key, operator: 'notexists', values: [] });
    } else if (i >= selector.length || selector[i] === ',') {
      requirements.push({ key, operator: 'exists', values: [] });
    } else if (selector.startsWith('!=', i)) {
      i += 2;
      skipSpace();
      requirements.push({ key, operator: '!=', values: [read(VALUE_CHAR)] });
    } else if (selector.startsWith('==', i) || selector[i] === '=') {
      i += selector.startsWith('==', i) ? 2 : 1;
      skipSpace();
      requirements.push({ key, operator: '=', values: [read(VALUE_CHAR)] });
    } else if (selector[i] === '>' || selector[i] === '<') {
      const operator = selector[i] === '>' ? 'gt' : 'lt';
      i++;
      skipSpace();
      const value = read(VALUE_CHAR);
      if (!/^-?\d+$/.test(value)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
      requirements.push({ key, operator, values: [value] });
    } else if (/^notin\b|^notin\(/.test(selector.slice(i))) {
      i += 5;
      requirements.push({ key, operator: 'notin', values: readSet() });
    } else if (/^in\b|^in\(/.test(selector.slice(i))) {
      i += 2;
      requirements.push({ key, operator: 'in', values: readSet() });
    } else {
      fail(`found '${selector[i] ?? ''}', expected: '=', '!=', '==', 'in', notin'`);
    }
    skipSpace();
    if (i >= selector.length) return requirements;
    if (selector[i] !== ',') fail(`found '${selector[i] ?? ''}', expected: ','`);
    i++;
  }
}

export function matchesLabelSelector(requirements: readonly LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const get = (key: string): string | undefined => (labels && Object.hasOwn(labels, key) ? labels[key] : undefined);
  return requirements.every((r) => {
    const value = get(r.key);
    switch (r.operator) {
      case 'exists':
        return value !== undefined;
      case 'notexists':
        return value === undefined;
      case '=':
      case 'in':
        return value !== undefined && r.values.includes(value);
      case '!=':
      case 'notin':
        return value === undefined || !r.values.includes(value);
      case 'gt':
      case 'lt': {
        if (value === undefined || !/^-?\d+$/.test(value)) return false;
        const limit = Number(r.values[0]);
        return r.operator === 'gt' ? Number(value) > limit : Number(value) < limit;
      }
    }
  });
}
