import { isKubernetesFormat, re2PatternProblem, type StructuralSchema } from './structural-schema.js';

/** Every keyword of apiextensions.k8s.io/v1 JSONSchemaProps that a CRD may carry. */
const JSON_SCHEMA_PROPS = new Set([
  'type',
  'format',
  'title',
  'description',
  'default',
  'nullable',
  'enum',
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
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'example',
  'externalDocs',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;
/** What a structural schema may not set inside allOf, anyOf, oneOf or not. */
const FORBIDDEN_IN_JUNCTORS = ['type', 'description', 'default', 'additionalProperties', 'nullable', 'title'] as const;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The reasons a CRD's `openAPIV3Schema` is not a structural schema the API server accepts, one line
 * each with the path of the node; empty when it is fine. Checks the rules of the apiextensions
 * documentation: a type on every node (unless int-or-string or preserve-unknown-fields), no
 * `$ref`/`$defs`/`const` or other keywords outside JSONSchemaProps, no additionalProperties beside
 * properties or as a boolean, nothing but value checks inside junctors (and only for fields specified
 * outside them), known string formats, RE2-compatible patterns, and a typed object at the root.
 */
export function structuralSchemaProblems(schema: unknown, path = 'openAPIV3Schema'): string[] {
  const problems: string[] = [];
  if (!isNode(schema)) return [`${path}: expected a schema object`];
  if (schema['type'] !== 'object') problems.push(`${path}: the root must have type object`);
  const metadata = isNode(schema['properties']) ? schema['properties']['metadata'] : undefined;
  if (isNode(metadata)) {
    const props = isNode(metadata['properties']) ? Object.keys(metadata['properties']) : [];
    const extra = Object.keys(metadata).filter((key) => key !== 'type' && key !== 'properties');
    if (extra.length > 0 || props.some((name) => name !== 'name' && name !== 'generateName')) {
      problems.push(`${path}.properties.metadata: only name and generateName may be restricted`);
    }
  }
  checkNode(schema, path, problems);
  return problems;
}

function checkNode(node: Node, path: string, problems: string[]): void {
  const problem = (message: string): void => {
    problems.push(`${path}: ${message}`);
  };
  for (const key of Object.keys(node)) {
    if (!JSON_SCHEMA_PROPS.has(key)) problem(`"${key}" is not a field of a CRD schema`);
  }
  const type = node['type'];
  const intOrString = node['x-kubernetes-int-or-string'];
  const preserve = node['x-kubernetes-preserve-unknown-fields'];
  if (preserve !== undefined && preserve !== true) problem('x-kubernetes-preserve-unknown-fields must be true when set');
  if (intOrString !== undefined && intOrString !== true) problem('x-kubernetes-int-or-string must be true when set');
  if (type === undefined) {
    if (intOrString !== true && preserve !== true) problem('type is required (unless x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields)');
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    problem(`type must be one of ${[...TYPES].join(', ')}, got ${JSON.stringify(type)}`);
  } else if (intOrString === true) {
    problem('type must be empty with x-kubernetes-int-or-string');
  }

  checkValueKeywords(node, problem);

  const properties = node['properties'];
  const additional = node['additionalProperties'];
  if (properties !== undefined || additional !== undefined) {
    if (type !== 'object') problem('properties and additionalProperties need type object');
  }
  if (properties !== undefined && additional !== undefined) problem('properties and additionalProperties are mutually exclusive');
  if (typeof additional === 'boolean') problem('additionalProperties must be a schema, not a boolean');
  if (properties !== undefined && !isNode(properties)) problem('properties must be a map of schemas');
  if (isNode(properties)) {
    for (const [name, child] of Object.entries(properties)) {
      if (!isNode(child)) problems.push(`${path}.properties.${name}: expected a schema object`);
      else checkNode(child, `${path}.properties.${name}`, problems);
    }
  }
  if (isNode(additional)) checkNode(additional, `${path}.additionalProperties`, problems);
  const required = node['required'];
  if (Array.isArray(required) && preserve !== true) {
    for (const name of required) {
      if (!isNode(properties) || !(String(name) in properties)) problem(`required field "${String(name)}" is not among the properties`);
    }
  }

  const items = node['items'];
  if (type === 'array' && items === undefined) problem('an array needs items');
  if (items !== undefined) {
    if (type !== 'array') problem('items needs type array');
    if (!isNode(items)) problem('items must be a single schema');
    else checkNode(items, `${path}.items`, problems);
  }
  const listType = node['x-kubernetes-list-type'];
  if (listType === 'set' && isNode(items) && !['string', 'integer', 'number', 'boolean'].includes(String(items['type']))) {
    problem('x-kubernetes-list-type set needs scalar items');
  }

  for (const junctor of [...JUNCTORS, 'not'] as const) {
    const value = node[junctor];
    if (value === undefined) continue;
    const branches = junctor === 'not' ? [value] : value;
    if (!Array.isArray(branches)) {
      problem(`${junctor} must be a list of schemas`);
      continue;
    }
    branches.forEach((branch, i) => {
      const where = junctor === 'not' ? `${path}.not` : `${path}.${junctor}[${i}]`;
      if (!isNode(branch)) problems.push(`${where}: expected a schema object`);
      else checkJunctorBranch(branch, node, where, problems, intOrString === true);
    });
  }
}

/** Value checks every node may carry, wherever it is. */
function checkValueKeywords(node: Node, problem: (message: string) => void): void {
  const type = node['type'];
  if (node['uniqueItems'] === true) problem('uniqueItems cannot be true (use x-kubernetes-list-type: set)');
  if (node['nullable'] !== undefined && typeof node['nullable'] !== 'boolean') problem('nullable must be a boolean');
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum'] as const) {
    if (node[key] !== undefined && typeof node[key] !== 'boolean') problem(`${key} must be a boolean (OpenAPI v3.0), got ${JSON.stringify(node[key])}`);
  }
  if (node['exclusiveMinimum'] === true && typeof node['minimum'] !== 'number') problem('exclusiveMinimum needs minimum');
  if (node['exclusiveMaximum'] === true && typeof node['maximum'] !== 'number') problem('exclusiveMaximum needs maximum');
  const format = node['format'];
  if (format !== undefined) {
    if (typeof format !== 'string' || !isKubernetesFormat(format)) problem(`format ${JSON.stringify(format)} is not one the API server knows`);
    else if (type !== undefined && type !== 'string') problem(`format ${format} only applies to strings`);
  }
  const pattern = node['pattern'];
  if (pattern !== undefined) {
    const why = typeof pattern === 'string' ? re2PatternProblem(pattern) : 'must be a string';
    if (why !== undefined) problem(`pattern ${JSON.stringify(pattern)} ${why}`);
  }
  const values = node['enum'];
  if (values !== undefined) {
    if (!Array.isArray(values) || values.length === 0) problem('enum must be a non-empty list');
    else if (typeof type === 'string') {
      for (const value of values) {
        if (!matchesType(value, type) && !(value === null && node['nullable'] === true)) problem(`enum value ${JSON.stringify(value)} is not of type ${type}`);
      }
    }
  }
}

function checkJunctorBranch(branch: Node, outer: Node, path: string, problems: string[], intOrString: boolean): void {
  const problem = (message: string): void => {
    problems.push(`${path}: ${message}`);
  };
  for (const key of Object.keys(branch)) {
    if (!JSON_SCHEMA_PROPS.has(key)) problem(`"${key}" is not a field of a CRD schema`);
  }
  // The one exception: int-or-string may spell its two types out as anyOf [integer, string].
  const isIntOrStringBranch = intOrString && Object.keys(branch).length === 1 && (branch['type'] === 'integer' || branch['type'] === 'string');
  if (!isIntOrStringBranch) {
    for (const key of FORBIDDEN_IN_JUNCTORS) {
      if (branch[key] !== undefined) problem(`${key} is not allowed inside allOf, anyOf, oneOf or not`);
    }
  }
  if (branch['x-kubernetes-preserve-unknown-fields'] !== undefined || branch['x-kubernetes-int-or-string'] !== undefined) {
    problem('x-kubernetes extensions are not allowed inside allOf, anyOf, oneOf or not');
  }
  checkValueKeywords({ ...branch, type: outer['type'] }, problem);
  const outerProperties = isNode(outer['properties']) ? outer['properties'] : {};
  const properties = branch['properties'];
  if (isNode(properties)) {
    for (const [name, child] of Object.entries(properties)) {
      const specified = outerProperties[name];
      if (!isNode(specified)) problem(`property "${name}" must also be specified outside the junctor`);
      else if (isNode(child)) checkJunctorBranch(child, specified, `${path}.properties.${name}`, problems, false);
    }
  }
  const required = branch['required'];
  if (Array.isArray(required) && outer['x-kubernetes-preserve-unknown-fields'] !== true) {
    for (const name of required) {
      if (!(String(name) in outerProperties)) problem(`required field "${String(name)}" is not among the outer properties`);
    }
  }
  if (branch['items'] !== undefined) {
    if (!isNode(outer['items'])) problem('items must also be specified outside the junctor');
    else if (isNode(branch['items'])) checkJunctorBranch(branch['items'], outer['items'], `${path}.items`, problems, false);
  }
  for (const junctor of [...JUNCTORS, 'not'] as const) {
    const nested = branch[junctor];
    if (nested === undefined) continue;
    const list = junctor === 'not' ? [nested] : Array.isArray(nested) ? nested : [];
    list.forEach((child: unknown, i) => {
      if (isNode(child)) checkJunctorBranch(child, outer, `${path}.${junctor}[${i}]`, problems, false);
    });
  }
}

function matchesType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isNode(value);
    default:
      return false;
  }
}

function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

/**
 * The fields of `value` that the API server would prune under `schema`: those no `properties` or
 * `additionalProperties` specifies, outside nodes that preserve unknown fields. Paths as
 * `spec.rules[0].from`.
 */
export function prunedFields(value: unknown, schema: StructuralSchema, path = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && schema.properties === undefined && schema.additionalProperties === undefined) return [];
  if (Array.isArray(value)) {
    return schema.items ? value.flatMap((item, i) => prunedFields(item, schema.items as StructuralSchema, `${path}[${i}]`)) : [];
  }
  if (!isNode(value)) return [];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const where = path === '' ? key : `${path}.${key}`;
    const specified = schema.properties?.[key] ?? schema.additionalProperties;
    if (specified) out.push(...prunedFields(child, specified, where));
    else if (schema['x-kubernetes-preserve-unknown-fields'] !== true) out.push(where);
  }
  return out;
}

/**
 * What the API server's schema validation says about `value`: types, nullability, enums, required
 * fields, string lengths and patterns, numeric and list bounds, int-or-string, and `required`-only
 * junctors. Unknown fields are not errors here (they are pruned: see prunedFields).
 */
export function schemaViolations(value: unknown, schema: StructuralSchema, path = ''): string[] {
  const at = (message: string): string => `${path === '' ? '<root>' : path}: ${message}`;
  if (value === null) return schema.nullable === true || schema.type === undefined ? [] : [at('must not be null')];
  if (schema['x-kubernetes-int-or-string'] === true) {
    return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)) ? [] : [at('expected an integer or a string')];
  }
  if (schema.type === undefined) return [];
  if (!matchesType(value, schema.type)) return [at(`expected ${schema.type}, got ${JSON.stringify(value)}`)];
  const out: string[] = [];
  if (schema.enum && !schema.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
    out.push(at(`${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`));
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) out.push(at(`shorter than ${schema.minLength}`));
    if (schema.maxLength !== undefined && length > schema.maxLength) out.push(at(`longer than ${schema.maxLength}`));
    if (schema.pattern !== undefined && !compilePattern(schema.pattern).test(value)) out.push(at(`does not match ${schema.pattern}`));
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum))
      out.push(at(`below the minimum ${schema.minimum}`));
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum))
      out.push(at(`above the maximum ${schema.maximum}`));
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) out.push(at(`fewer than ${schema.minItems} items`));
    if (schema.maxItems !== undefined && value.length > schema.maxItems) out.push(at(`more than ${schema.maxItems} items`));
    if (schema.items) value.forEach((item, i) => out.push(...schemaViolations(item, schema.items as StructuralSchema, `${path}[${i}]`)));
  }
  if (isNode(value)) {
    for (const name of schema.required ?? []) if (!(name in value)) out.push(at(`missing required field ${name}`));
    for (const [key, child] of Object.entries(value)) {
      const specified = schema.properties?.[key] ?? schema.additionalProperties;
      if (specified) out.push(...schemaViolations(child, specified, path === '' ? key : `${path}.${key}`));
    }
    const hasAll = (branch: StructuralSchema): boolean => (branch.required ?? []).every((name) => name in value);
    if (schema.anyOf && !schema.anyOf.some(hasAll)) out.push(at('matches none of the anyOf alternatives'));
    if (schema.oneOf && schema.oneOf.filter(hasAll).length !== 1) out.push(at('must match exactly one of the oneOf alternatives'));
  }
  return out;
}
