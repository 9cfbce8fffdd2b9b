import type { z } from 'zod';
import { renderPath, type Path, type ValidationIssue } from './validation-issue.js';

/** How a value found in the input is named in a message. */
export function describeInput(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

function expectedType(expected: string): string {
  switch (expected) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'int':
    case 'bigint':
      return 'an integer';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'an object';
    default:
      return `a value of type ${expected}`;
  }
}

type NumericSchema = { minValue?: number | null; maxValue?: number | null; isInt?: boolean | null };

function numberRange(issue: z.core.$ZodRawIssue, fallbackMin?: number, fallbackMax?: number): string {
  const schema = issue.schema as NumericSchema | undefined;
  const noun = schema?.isInt ? 'an integer' : 'a number';
  const min = schema?.minValue ?? fallbackMin;
  const max = schema?.maxValue ?? fallbackMax;
  const hasMin = typeof min === 'number' && Number.isFinite(min) && min > Number.MIN_SAFE_INTEGER;
  const hasMax = typeof max === 'number' && Number.isFinite(max) && max < Number.MAX_SAFE_INTEGER;
  if (hasMin && hasMax) return `${noun} from ${min} to ${max}`;
  if (hasMin) return `${noun} of at least ${min}`;
  if (hasMax) return `${noun} of at most ${max}`;
  return noun;
}

function plural(count: number | bigint, word: string): string {
  return `${count} ${word}${count === 1 || count === 1n ? '' : 's'}`;
}

function sizeMessage(issue: z.core.$ZodRawIssue<z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig>): string {
  const input = issue.input;
  const small = issue.code === 'too_small';
  const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
  switch (issue.origin) {
    case 'string': {
      if (small && Number(bound) === 1) return 'expected a non-empty string';
      const length = typeof input === 'string' ? input.length : 0;
      return `expected ${small ? 'at least' : 'at most'} ${plural(bound, 'character')}, got ${length}`;
    }
    case 'array': {
      const length = Array.isArray(input) ? input.length : 0;
      return `expected ${small ? 'at least' : 'at most'} ${plural(bound, 'item')}, got ${length}`;
    }
    case 'number':
    case 'int':
    case 'bigint': {
      const range = small ? numberRange(issue, Number(bound)) : numberRange(issue, undefined, Number(bound));
      return `expected ${range}, got ${describeInput(input)}`;
    }
    default:
      return `expected a value ${small ? 'of at least' : 'of at most'} ${bound}`;
  }
}

/**
 * The error map passed to every parse, so zod's generic messages say what is expected in our words.
 * Messages set on a schema itself win over this map. For unknown fields the "message" is the list of
 * known fields; {@link toValidationIssues} turns it into one issue per unknown field.
 */
export const zodErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `required: expected ${expectedType(issue.expected)}`;
      return `expected ${expectedType(issue.expected)}, got ${describeInput(issue.input)}`;
    case 'too_small':
    case 'too_big':
      return sizeMessage(issue);
    case 'invalid_value': {
      const values = issue.values.map((value) => (typeof value === 'string' ? value : String(value)));
      const expected = values.length === 1 ? values[0] : `one of ${values.join(', ')}`;
      return `expected ${expected}, got ${describeInput(issue.input)}`;
    }
    case 'unrecognized_keys': {
      const shape = (issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
      return shape ? Object.keys(shape).join(', ') : '';
    }
    case 'invalid_format':
      return `expected a string in ${issue.format} format, got ${describeInput(issue.input)}`;
    case 'not_multiple_of':
      return `expected a multiple of ${issue.divisor}, got ${describeInput(issue.input)}`;
    case 'invalid_union':
      return 'expected one of the allowed forms of this field';
    case 'invalid_key':
      return 'expected a valid key';
    default:
      return undefined;
  }
};

/** Converts zod issues (parsed with {@link zodErrorMap}) to ours, paths rendered under `prefix`. */
export function toValidationIssues(issues: readonly z.core.$ZodIssue[], prefix: Path = []): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const path: Path = [...prefix, ...issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)))];
    if (issue.code === 'unrecognized_keys') {
      const known = issue.message === '' ? '' : `; expected one of: ${issue.message}`;
      for (const key of issue.keys) {
        out.push({ path: renderPath([...path, key]), message: `unknown field "${key}"${known}` });
      }
      continue;
    }
    out.push({ path: renderPath(path), message: issue.message });
  }
  return out;
}
