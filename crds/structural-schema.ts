import { errorMessage } from '../runtime/index.js';
/**
 * A node of a Kubernetes structural schema: the subset of `apiextensions.k8s.io/v1` JSONSchemaProps
 * that the CRD generator emits.
 */
export interface StructuralSchema {
  type?: StructuralType;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  nullable?: boolean;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema;
  items?: StructuralSchema;
  allOf?: StructuralSchema[];
  anyOf?: StructuralSchema[];
  oneOf?: StructuralSchema[];
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set';
}

export type StructuralType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

type JsonSchema = { readonly [key: string]: unknown };

const STRUCTURAL_TYPES: ReadonlySet<string> = new Set<StructuralType>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/**
 * The string formats the API server validates (apiextensions `supportedVersionedFormats`), compared
 * without dashes as the API server does. Any other format is dropped: the API server would ignore it
 * with a warning, and our own validator is the authority anyway.
 */
const KUBERNETES_FORMATS: ReadonlySet<string> = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
  'k8sshortname',
  'k8slongname',
]);

export function isKubernetesFormat(format: string): boolean {
  return KUBERNETES_FORMATS.has(format.replace(/-/g, '').toLowerCase());
}

/** Keywords that only constrain a value; the only ones a structural schema allows inside `allOf`. */
const VALUE_VALIDATIONS = [
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'enum',
  'format',
] as const;

/**
 * Why a JavaScript pattern cannot be used as a CRD `pattern`, or undefined when it can. The API server
 * compiles patterns with Go's RE2, which has no lookaround, no backreferences and no `\u` escapes.
 */
export function re2PatternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
  } catch {
    try {
      new RegExp(pattern);
    } catch (error) {
      return `does not compile: ${errorMessage(error)}`;
    }
  }
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') return 'uses a backreference, which RE2 lacks';
      if (next === 'u' || next === 'c') return `uses \\${next} escapes, which RE2 lacks (use \\x{…})`;
      i++;
    } else if (inClass) {
      if (ch === ']') inClass = false;
    } else if (ch === '[') {
      inClass = true;
    } else if (ch === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') return 'uses lookaround, which RE2 lacks';
    }
  }
  return undefined;
}

interface Context {
  readonly defs: Readonly<Record<string, JsonSchema>>;
  /** The definitions being inlined on the current path: a reference back to one of them is recursion. */
  readonly resolving: readonly string[];
}

/**
 * Turns a JSON Schema (draft 2020-12, as `z.toJSONSchema` writes it) into a Kubernetes structural
 * schema: references inlined, every node typed, unions folded into enums, int-or-string or merged
 * objects, nullability as `nullable`, and open values marked `x-kubernetes-preserve-unknown-fields`.
 * The result never rejects a value the JSON Schema accepts, so the webhook and `validateResource`
 * stay the authority on what is valid.
 */
export function toStructuralSchema(jsonSchema: object): StructuralSchema {
  const root = jsonSchema as JsonSchema;
  const defs = { ...asRecord(root['definitions']), ...asRecord(root['$defs']) } as Record<string, JsonSchema>;
  return sortSchemaKeys(convert(root, { defs, resolving: [] }));
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function isSchemaObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function open(description?: string): StructuralSchema {
  return { ...(description !== undefined ? { description } : {}), 'x-kubernetes-preserve-unknown-fields': true };
}

function annotations(node: JsonSchema): StructuralSchema {
  const out: StructuralSchema = {};
  if (typeof node['title'] === 'string') out.title = node['title'];
  if (typeof node['description'] === 'string') out.description = node['description'];
  if (node['default'] !== undefined) out.default = node['default'];
  return out;
}

function convert(input: unknown, ctx: Context): StructuralSchema {
  if (input === true || input === undefined) return open();
  if (!isSchemaObject(input)) return open();
  let node: JsonSchema = input;

  const ref = node['$ref'];
  if (typeof ref === 'string') {
    const name = ref.replace(/^#\/(\$defs|definitions)\//, '');
    const target = ctx.defs[name];
    const { $ref: _ref, ...siblings } = node;
    if (target === undefined) return { ...annotations(siblings), ...open() };
    if (ctx.resolving.includes(name)) {
      // Recursion cannot be inlined: keep the node's type and let the API server keep its contents.
      const type = singleType(target);
      return { ...annotations(siblings), ...(type === 'object' || type === 'array' ? { type } : {}), ...open() };
    }
    return convert({ ...target, ...siblings }, { ...ctx, resolving: [...ctx.resolving, name] });
  }

  if (Array.isArray(node['allOf'])) {
    const { allOf, ...rest } = node;
    const parts = [rest, ...(allOf as unknown[])].map((part) => convert(part, ctx));
    return parts.reduce(mergeIntersection);
  }

  let nullable = false;
  const union = node['anyOf'] ?? node['oneOf'];
  if (Array.isArray(union)) {
    const branches = (union as unknown[]).filter((branch) => !isNullSchema(branch));
    nullable = branches.length < union.length;
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = node;
    const converted = convertUnion(branches, node['oneOf'] !== undefined, ctx);
    const merged = Object.keys(rest).length === 0 ? converted : mergeIntersection(convert(rest, ctx), converted);
    return withNullable({ ...merged, ...annotations(node) }, nullable);
  }

  if (Array.isArray(node['type'])) {
    const types = (node['type'] as unknown[]).filter((t) => t !== 'null');
    nullable = types.length < node['type'].length;
    const { type: _type, ...rest } = node;
    if (types.length === 1) {
      node = { ...rest, type: types[0] };
    } else {
      const converted = convertUnion(
        types.map((type) => ({ ...rest, type })),
        false,
        ctx,
      );
      return withNullable({ ...converted, ...annotations(node) }, nullable);
    }
  }

  if ('const' in node) {
    const { const: value, ...rest } = node;
    node = { ...rest, enum: [value] };
  }
  if (Array.isArray(node['enum']) && node['enum'].includes(null)) {
    nullable = true;
    node = { ...node, enum: node['enum'].filter((value: unknown) => value !== null) };
  }
  if (node['nullable'] === true) nullable = true;

  return withNullable(convertTyped(node, ctx), nullable);
}

function withNullable(schema: StructuralSchema, nullable: boolean): StructuralSchema {
  return nullable ? { ...schema, nullable: true } : schema;
}

function isNullSchema(value: unknown): boolean {
  return isSchemaObject(value) && (value['type'] === 'null' || (Array.isArray(value['enum']) && value['enum'].length === 1 && value['enum'][0] === null));
}

function singleType(node: JsonSchema): StructuralType | undefined {
  const type = node['type'];
  if (typeof type === 'string' && STRUCTURAL_TYPES.has(type)) return type as StructuralType;
  if (isSchemaObject(node['properties']) || node['additionalProperties'] !== undefined) return 'object';
  if (node['items'] !== undefined || node['prefixItems'] !== undefined) return 'array';
  const values = Array.isArray(node['enum']) ? node['enum'] : 'const' in node ? [node['const']] : [];
  const inferred = [...new Set(values.map(jsonTypeOf))];
  return inferred.length === 1 ? inferred[0] : undefined;
}

function jsonTypeOf(value: unknown): StructuralType | undefined {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object' && value !== null) return 'object';
  return undefined;
}

function convertTyped(node: JsonSchema, ctx: Context): StructuralSchema {
  const type = singleType(node);
  const out: StructuralSchema = annotations(node);
  if (type === undefined) return { ...out, ...open() };
  out.type = type;
  switch (type) {
    case 'object':
      return convertObject(node, out, ctx);
    case 'array':
      return convertArray(node, out, ctx);
    case 'string':
      copyNumbers(node, out, ['minLength', 'maxLength']);
      if (typeof node['pattern'] === 'string' && re2PatternProblem(node['pattern']) === undefined) out.pattern = node['pattern'];
      if (typeof node['format'] === 'string' && isKubernetesFormat(node['format'])) out.format = node['format'];
      break;
    case 'integer':
    case 'number':
      copyNumbers(node, out, ['minimum', 'maximum', 'multipleOf']);
      // Draft 2020-12 writes exclusive bounds as numbers; OpenAPI v3.0 as flags on minimum/maximum.
      if (typeof node['exclusiveMinimum'] === 'number') {
        out.minimum = node['exclusiveMinimum'];
        out.exclusiveMinimum = true;
      } else if (node['exclusiveMinimum'] === true && out.minimum !== undefined) {
        out.exclusiveMinimum = true;
      }
      if (typeof node['exclusiveMaximum'] === 'number') {
        out.maximum = node['exclusiveMaximum'];
        out.exclusiveMaximum = true;
      } else if (node['exclusiveMaximum'] === true && out.maximum !== undefined) {
        out.exclusiveMaximum = true;
      }
      break;
    case 'boolean':
      break;
  }
  if (Array.isArray(node['enum'])) {
    const values = node['enum'].filter((value: unknown) => jsonTypeOf(value) === type || (type === 'number' && typeof value === 'number'));
    if (values.length > 0) out.enum = [...new Set(values)];
  }
  return out;
}

function copyNumbers(node: JsonSchema, out: StructuralSchema, keys: readonly (keyof StructuralSchema & string)[]): void {
  for (const key of keys) {
    const value = node[key];
    if (typeof value === 'number') (out as Record<string, unknown>)[key] = value;
  }
}

function convertObject(node: JsonSchema, out: StructuralSchema, ctx: Context): StructuralSchema {
  copyNumbers(node, out, ['minProperties', 'maxProperties']);
  const properties = isSchemaObject(node['properties']) ? node['properties'] : undefined;
  const extra = node['additionalProperties'];
  if (properties !== undefined && Object.keys(properties).length > 0) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([name, child]) => [name, convert(child, ctx)]));
    const required = Array.isArray(node['required']) ? node['required'].filter((name): name is string => typeof name === 'string') : [];
    if (required.length > 0) out.required = required;
    // A structural schema cannot combine properties with additionalProperties. `false` (strict) is
    // dropped: the API server prunes unknown fields and our validator rejects them. A schema for
    // the extra fields means the object is open beyond its named properties.
    if (extra !== undefined && extra !== false) out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }
  if (extra === undefined || extra === false) return out;
  const values = convert(extra, ctx);
  if (values['x-kubernetes-preserve-unknown-fields'] === true && values.type === undefined) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  } else {
    out.additionalProperties = values;
  }
  return out;
}

function convertArray(node: JsonSchema, out: StructuralSchema, ctx: Context): StructuralSchema {
  copyNumbers(node, out, ['minItems', 'maxItems']);
  const tuple = Array.isArray(node['prefixItems']) ? (node['prefixItems'] as unknown[]) : undefined;
  const items = isSchemaObject(node['items']) || node['items'] === true ? [node['items']] : [];
  const elements = [...(tuple ?? []), ...items];
  out.items = elements.length === 0 ? open() : elements.length === 1 ? convert(elements[0], ctx) : convertUnion(elements, false, ctx);
  if (node['uniqueItems'] === true && isScalar(out.items)) out['x-kubernetes-list-type'] = 'set';
  return out;
}

function isScalar(schema: StructuralSchema): boolean {
  return schema.type === 'string' || schema.type === 'integer' || schema.type === 'number' || schema.type === 'boolean';
}

/**
 * A union as one structural node: alike scalars become one type (their enums joined), integer and
 * string become int-or-string, objects become one object with every property, and anything else
 * is left open. Per-branch required fields survive as an `anyOf` (or `oneOf`) of `required` only.
 */
function convertUnion(branches: readonly unknown[], exclusive: boolean, ctx: Context): StructuralSchema {
  if (branches.length === 0) return open();
  const converted = branches.map((branch) => convert(branch, ctx));
  if (converted.length === 1) return converted[0] as StructuralSchema;
  if (converted.some((schema) => schema['x-kubernetes-preserve-unknown-fields'] === true && schema.type === undefined)) return open();

  const types = new Set(converted.map((schema) => schema.type));
  if (types.size === 2 && types.has('integer') && types.has('string')) return { 'x-kubernetes-int-or-string': true };
  if (types.size === 2 && types.has('integer') && types.has('number')) {
    return converted.reduce((a, b) => widen({ ...a, type: 'number' }, { ...b, type: 'number' }));
  }
  if (types.size !== 1) return open();

  const merged = converted.reduce(widen);
  if (merged.type !== 'object') return merged;
  const everywhere = new Set(converted.map((schema) => schema.required ?? []).reduce((a, b) => a.filter((name) => b.includes(name))));
  const remainders = converted.map((schema) => (schema.required ?? []).filter((name) => !everywhere.has(name)));
  const { required: _required, anyOf: _anyOf, oneOf: _oneOf, ...rest } = merged;
  const result: StructuralSchema = { ...rest, ...(everywhere.size > 0 ? { required: [...everywhere] } : {}) };
  const distinct = new Set(remainders.map((names) => JSON.stringify([...names].sort())));
  // A branch without its own required fields matches anything the others match: nothing to add.
  if (remainders.every((names) => names.length > 0) && distinct.size > 1) {
    const disjoint = remainders.every((names, i) => remainders.every((other, j) => i === j || !names.some((name) => other.includes(name))));
    const junctor = remainders.map((names) => ({ required: names }));
    if (exclusive && disjoint && branches.every(isClosedObject)) result.oneOf = junctor;
    else result.anyOf = junctor;
  }
  return result;
}

function isClosedObject(branch: unknown): boolean {
  return isSchemaObject(branch) && branch['additionalProperties'] === false;
}

/** The least schema both inputs satisfy (for union branches of one type). */
function widen(a: StructuralSchema, b: StructuralSchema): StructuralSchema {
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  if (a.type !== b.type || a.type === undefined) {
    const types = new Set([a.type, b.type]);
    if (types.has('integer') && types.has('string')) return { 'x-kubernetes-int-or-string': true };
    if (a['x-kubernetes-int-or-string'] === true && b['x-kubernetes-int-or-string'] === true) return a;
    return open();
  }
  const out: StructuralSchema = { type: a.type as StructuralType };
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof StructuralSchema>;
  for (const key of keys) {
    const left = a[key];
    const right = b[key];
    if (key === 'type') continue;
    if (key === 'enum') {
      if (Array.isArray(left) && Array.isArray(right)) out.enum = [...new Set([...left, ...right])];
    } else if (key === 'properties') {
      const names = new Set([...Object.keys(a.properties ?? {}), ...Object.keys(b.properties ?? {})]);
      out.properties = {};
      for (const name of names) {
        const l = a.properties?.[name];
        const r = b.properties?.[name];
        out.properties[name] = l && r ? widen(l, r) : ((l ?? r) as StructuralSchema);
      }
    } else if (key === 'required') {
      out.required = (a.required ?? []).filter((name) => (b.required ?? []).includes(name));
    } else if (key === 'items' && a.items && b.items) {
      out.items = widen(a.items, b.items);
    } else if (key === 'additionalProperties' && a.additionalProperties && b.additionalProperties) {
      out.additionalProperties = widen(a.additionalProperties, b.additionalProperties);
    } else if (key === 'description' || key === 'title') {
      if (left !== undefined) (out as Record<string, unknown>)[key] = left;
      else if (right !== undefined) (out as Record<string, unknown>)[key] = right;
    } else if (key === 'x-kubernetes-preserve-unknown-fields' || key === 'nullable') {
      if (left === true || right === true) (out as Record<string, unknown>)[key] = true;
    } else if (JSON.stringify(left) === JSON.stringify(right)) {
      (out as Record<string, unknown>)[key] = left;
    }
  }
  if (out.required?.length === 0) delete out.required;
  if (out.properties && out.additionalProperties) {
    delete out.additionalProperties;
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}

/** Both schemas at once (an `allOf`): properties merged; a conflicting value check kept in `allOf`. */
function mergeIntersection(a: StructuralSchema, b: StructuralSchema): StructuralSchema {
  const aOpen = a['x-kubernetes-preserve-unknown-fields'] === true && a.type === undefined;
  const bOpen = b['x-kubernetes-preserve-unknown-fields'] === true && b.type === undefined;
  if (aOpen && !bOpen) return { ...b, ...(a.description !== undefined && b.description === undefined ? { description: a.description } : {}) };
  if (bOpen) return { ...a, ...(b.description !== undefined && a.description === undefined ? { description: b.description } : {}) };
  if (a.type !== undefined && b.type !== undefined && a.type !== b.type) return open(a.description ?? b.description);

  const out: StructuralSchema = { ...a };
  const extra: StructuralSchema = {};
  for (const [key, value] of Object.entries(b) as [keyof StructuralSchema, unknown][]) {
    const current = out[key];
    if (current === undefined) {
      (out as Record<string, unknown>)[key] = value;
    } else if (key === 'properties') {
      const merged: Record<string, StructuralSchema> = { ...out.properties };
      for (const [name, child] of Object.entries(b.properties ?? {})) {
        const existing = merged[name];
        merged[name] = existing ? mergeIntersection(existing, child) : child;
      }
      out.properties = merged;
    } else if (key === 'required') {
      out.required = [...new Set([...(out.required ?? []), ...(b.required ?? [])])];
    } else if (key === 'items' && out.items && b.items) {
      out.items = mergeIntersection(out.items, b.items);
    } else if (JSON.stringify(current) !== JSON.stringify(value) && (VALUE_VALIDATIONS as readonly string[]).includes(key)) {
      (extra as Record<string, unknown>)[key] = value;
    }
  }
  if (Object.keys(extra).length > 0) out.allOf = [...(out.allOf ?? []), extra];
  if (out.properties && out.additionalProperties) {
    delete out.additionalProperties;
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}

/** Keys in alphabetical order at every level, property names included, as Kubernetes prints schemas. */
export function sortSchemaKeys(schema: StructuralSchema): StructuralSchema {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema).sort()) {
    const value = (schema as Record<string, unknown>)[key];
    if (key === 'properties') {
      const properties = value as Record<string, StructuralSchema>;
      out[key] = Object.fromEntries(
        Object.keys(properties)
          .sort()
          .map((name) => [name, sortSchemaKeys(properties[name] as StructuralSchema)]),
      );
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = sortSchemaKeys(value as StructuralSchema);
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      out[key] = (value as StructuralSchema[]).map(sortSchemaKeys);
    } else {
      out[key] = value;
    }
  }
  return out as StructuralSchema;
}
