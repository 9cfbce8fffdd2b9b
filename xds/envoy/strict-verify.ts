import protobuf from 'protobufjs';

const ANY = '.google.protobuf.Any';
const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);
const FLOAT = new Set(['double', 'float']);
const FLOAT_WORDS = new Set(['NaN', 'Infinity', '-Infinity']);

/**
 * Checks a plain object against a message type more strictly than protobufjs' own verify:
 * every key must be a field (by its snake_case name), scalars must have the right JS type,
 * enums must be known values, at most one member of a oneof may be set, and a nested `Any`
 * written with `@type` is checked against the type it names. Returns the problems with their
 * paths (`filter_chains[0].filters[1].typed_config.stat_prefix`); empty when valid.
 */
export function verifyMessage(type: protobuf.Type, value: unknown): string[] {
  const issues: string[] = [];
  checkMessage(type, value, '', issues, 0);
  return issues;
}

const MAX_DEPTH = 64;

function checkMessage(type: protobuf.Type, value: unknown, path: string, issues: string[], depth: number): void {
  if (depth > MAX_DEPTH) {
    issues.push(`${path || '(root)'}: nested too deeply`);
    return;
  }
  if (!isPlainObject(value)) {
    issues.push(`${path || '(root)'}: expected a ${type.fullName.slice(1)} object`);
    return;
  }
  let target = type;
  let skip: string | undefined;
  if (type.fullName === ANY && '@type' in value) {
    const url = value['@type'];
    if (typeof url !== 'string' || !url.includes('/')) {
      issues.push(`${join(path, '@type')}: expected a type URL`);
      return;
    }
    const named = lookupMessage(type.root as protobuf.Root, url.slice(url.lastIndexOf('/') + 1));
    if (!named) {
      issues.push(`${join(path, '@type')}: unknown type ${url}`);
      return;
    }
    target = named;
    skip = '@type';
  }
  const oneofsSet = new Map<string, string>();
  for (const [key, fieldValue] of Object.entries(value)) {
    if (key === skip) continue;
    const field = target.fields[key];
    const fieldPath = join(path, key);
    if (!field) {
      issues.push(`${fieldPath}: unknown field of ${target.fullName.slice(1)}`);
      continue;
    }
    if (fieldValue === null || fieldValue === undefined) continue;
    if (field.partOf) {
      const other = oneofsSet.get(field.partOf.name);
      if (other !== undefined) issues.push(`${fieldPath}: oneof ${field.partOf.name} already set by ${other}`);
      else oneofsSet.set(field.partOf.name, key);
    }
    if (field.map) {
      if (!isPlainObject(fieldValue)) {
        issues.push(`${fieldPath}: expected a map`);
        continue;
      }
      for (const [mapKey, mapValue] of Object.entries(fieldValue)) {
        checkValue(field, mapValue, `${fieldPath}[${JSON.stringify(mapKey)}]`, issues, depth);
      }
    } else if (field.repeated) {
      if (!Array.isArray(fieldValue)) {
        issues.push(`${fieldPath}: expected a list`);
        continue;
      }
      fieldValue.forEach((item, index) => checkValue(field, item, `${fieldPath}[${index}]`, issues, depth));
    } else {
      checkValue(field, fieldValue, fieldPath, issues, depth);
    }
  }
}

function checkValue(field: protobuf.Field, value: unknown, path: string, issues: string[], depth: number): void {
  const resolved = field.resolve().resolvedType;
  if (resolved instanceof protobuf.Type) {
    checkMessage(resolved, value, path, issues, depth + 1);
    return;
  }
  if (resolved instanceof protobuf.Enum) {
    const ok =
      (typeof value === 'string' && value in resolved.values) ||
      (typeof value === 'number' && Object.values(resolved.values).includes(value));
    if (!ok) issues.push(`${path}: unknown ${resolved.name} value ${JSON.stringify(value)}`);
    return;
  }
  const problem = scalarProblem(field.type, value);
  if (problem) issues.push(`${path}: ${problem}`);
}

function scalarProblem(scalar: string, value: unknown): string | undefined {
  if (scalar === 'string') return typeof value === 'string' ? undefined : 'expected a string';
  if (scalar === 'bool') return typeof value === 'boolean' ? undefined : 'expected a boolean';
  if (scalar === 'bytes') {
    return value instanceof Uint8Array || typeof value === 'string' ? undefined : 'expected bytes';
  }
  if (FLOAT.has(scalar)) {
    return typeof value === 'number' || (typeof value === 'string' && FLOAT_WORDS.has(value)) ? undefined : 'expected a number';
  }
  if (INT32.has(scalar)) return integerProblem(value, -(2 ** 31), 2 ** 31 - 1);
  if (UINT32.has(scalar)) return integerProblem(value, 0, 2 ** 32 - 1);
  if (INT64.has(scalar)) {
    if (typeof value === 'string') return /^-?\d+$/.test(value) ? undefined : 'expected an integer';
    if (isPlainObject(value) && typeof value.low === 'number' && typeof value.high === 'number') return undefined;
    const unsigned = scalar.startsWith('u') || scalar === 'fixed64';
    return integerProblem(value, unsigned ? 0 : Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  }
  return `unsupported scalar type ${scalar}`;
}

function integerProblem(value: unknown, min: number, max: number): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'expected an integer';
  return value < min || value > max ? `expected an integer from ${min} to ${max}` : undefined;
}

function lookupMessage(root: protobuf.Root, name: string): protobuf.Type | undefined {
  const found = root.lookup(name);
  return found instanceof protobuf.Type ? found : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
