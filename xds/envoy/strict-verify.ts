import protobuf from 'protobufjs';

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);
const FLOAT = new Set(['double', 'float']);
const FLOAT_WORDS = new Set(['NaN', 'Infinity', '-Infinity']);
const MAX_DEPTH = 64;

/**
 * Checks plain objects against message types more strictly than protobufjs' own verify: every
 * key must be a field (by its snake_case name), scalars must have the right JS type, enums must
 * be known values, at most one member of a oneof may be set, and a nested `Any` written with
 * `@type` is checked against the type it names.
 */
export interface StrictVerifier {
  /** The problems with their paths (`filter_chains[0].filters[1].typed_config.stat_prefix`); empty when valid. */
  verify(type: protobuf.Type, value: unknown): string[];
}

export function newStrictVerifier(root: protobuf.Root): StrictVerifier {
  const anyType = root.lookup('google.protobuf.Any');
  const typesByName = new Map<string, protobuf.Type>();
  const lookupMessage = (name: string): protobuf.Type | undefined => {
    let type = typesByName.get(name);
    if (!type) {
      const found = root.lookup(name);
      if (!(found instanceof protobuf.Type)) return undefined;
      // Only types that exist are kept: a resource naming made-up types cannot grow the map.
      typesByName.set(name, (type = found));
    }
    return type;
  };

  /**
   * Walks `value`. Without `issues` (the first pass, over every generated resource) it builds no
   * paths and stops at the first problem; with `issues` it records every problem with its path.
   */
  const checkMessage = (type: protobuf.Type, value: unknown, path: string, issues: string[] | undefined, depth: number): boolean => {
    if (depth > MAX_DEPTH) return fail(issues, `${path || '(root)'}: nested too deeply`);
    if (!isPlainObject(value)) return fail(issues, `${path || '(root)'}: expected a ${type.fullName.slice(1)} object`);
    let target = type;
    let skip: string | undefined;
    if (type === anyType && '@type' in value) {
      const url = value['@type'];
      if (typeof url !== 'string' || !url.includes('/')) return fail(issues, `${join(path, '@type')}: expected a type URL`);
      const named = lookupMessage(url.slice(url.lastIndexOf('/') + 1));
      if (!named) return fail(issues, `${join(path, '@type')}: unknown type ${url}`);
      target = named;
      skip = '@type';
    }
    let oneofsSet: Map<string, string> | undefined;
    let valid = true;
    for (const key of Object.keys(value)) {
      if (key === skip) continue;
      const fieldValue = value[key];
      const field = target.fields[key];
      const fieldPath = issues ? join(path, key) : '';
      if (!field) {
        valid = fail(issues, `${fieldPath}: unknown field of ${target.fullName.slice(1)}`);
        if (!issues) return false;
        continue;
      }
      if (fieldValue === null || fieldValue === undefined) continue;
      if (field.partOf) {
        oneofsSet ??= new Map();
        const other = oneofsSet.get(field.partOf.name);
        if (other !== undefined) {
          valid = fail(issues, `${fieldPath}: oneof ${field.partOf.name} already set by ${other}`);
          if (!issues) return false;
        } else oneofsSet.set(field.partOf.name, key);
      }
      if (field.map) {
        if (!isPlainObject(fieldValue)) {
          valid = fail(issues, `${fieldPath}: expected a map`);
          if (!issues) return false;
          continue;
        }
        for (const mapKey of Object.keys(fieldValue)) {
          if (!checkValue(field, fieldValue[mapKey], issues ? `${fieldPath}[${JSON.stringify(mapKey)}]` : '', issues, depth)) valid = false;
          if (!valid && !issues) return false;
        }
      } else if (field.repeated) {
        if (!Array.isArray(fieldValue)) {
          valid = fail(issues, `${fieldPath}: expected a list`);
          if (!issues) return false;
          continue;
        }
        for (let index = 0; index < fieldValue.length; index++) {
          if (!checkValue(field, fieldValue[index], issues ? `${fieldPath}[${index}]` : '', issues, depth)) valid = false;
          if (!valid && !issues) return false;
        }
      } else if (!checkValue(field, fieldValue, fieldPath, issues, depth)) {
        valid = false;
        if (!issues) return false;
      }
    }
    return valid;
  };

  const checkValue = (field: protobuf.Field, value: unknown, path: string, issues: string[] | undefined, depth: number): boolean => {
    const resolved = field.resolve().resolvedType;
    if (resolved instanceof protobuf.Type) return checkMessage(resolved, value, path, issues, depth + 1);
    if (resolved instanceof protobuf.Enum) {
      const ok = (typeof value === 'string' && value in resolved.values) || (typeof value === 'number' && resolved.valuesById[value] !== undefined);
      return ok || fail(issues, `${path}: unknown ${resolved.name} value ${JSON.stringify(value)}`);
    }
    const problem = scalarProblem(field.type, value);
    return problem === undefined || fail(issues, `${path}: ${problem}`);
  };

  return {
    verify(type, value) {
      if (checkMessage(type, value, '', undefined, 0)) return [];
      const issues: string[] = [];
      checkMessage(type, value, '', issues, 0);
      return issues;
    },
  };
}

/** Records a problem when paths are being collected; always false. */
function fail(issues: string[] | undefined, problem: string): false {
  issues?.push(problem);
  return false;
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
