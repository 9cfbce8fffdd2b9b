import { describe, test, expect } from '@jest/globals';
import { z } from 'zod';
import { prunedFields, schemaViolations, structuralSchemaProblems } from './structural-schema-check.js';
import { re2PatternProblem, toStructuralSchema, type StructuralSchema } from './structural-schema.js';

/** The structural schema of one field, converted the way the CRD generator converts a spec. */
function fieldSchema(field: z.ZodType): StructuralSchema | undefined {
  const root = toStructuralSchema(z.toJSONSchema(z.strictObject({ field }), { io: 'input' }));
  expect(structuralSchemaProblems(root)).toEqual([]);
  return root.properties?.['field'];
}

const Tree: z.ZodType = z.lazy(() => z.strictObject({ name: z.string(), children: z.array(Tree).optional() }));

describe('toStructuralSchema', () => {
  test.each<[string, z.ZodType, StructuralSchema]>([
    [
      'a strict object drops additionalProperties: false',
      z.strictObject({ a: z.string(), b: z.int().optional() }),
      {
        properties: { a: { type: 'string' }, b: { maximum: Number.MAX_SAFE_INTEGER, minimum: Number.MIN_SAFE_INTEGER, type: 'integer' } },
        required: ['a'],
        type: 'object',
      },
    ],
    [
      'a record keeps its value schema and loses propertyNames',
      z.record(z.string(), z.string().min(1)),
      {
        additionalProperties: { minLength: 1, type: 'string' },
        type: 'object',
      },
    ],
    ['a record of anything preserves unknown fields', z.record(z.string(), z.unknown()), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }],
    [
      'a loose object keeps its properties and preserves the rest',
      z.looseObject({ a: z.string() }),
      {
        properties: { a: { type: 'string' } },
        required: ['a'],
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
      },
    ],
    ['nullable becomes nullable: true', z.string().nullable(), { nullable: true, type: 'string' }],
    [
      'a nullable object',
      z.strictObject({ a: z.boolean() }).nullable(),
      { nullable: true, properties: { a: { type: 'boolean' } }, required: ['a'], type: 'object' },
    ],
    ['a literal becomes a one-value enum, never const', z.literal('ONLY'), { enum: ['ONLY'], type: 'string' }],
    ['a union of literals becomes one enum', z.union([z.literal('A'), z.literal('B'), z.enum(['C', 'A'])]), { enum: ['A', 'B', 'C'], type: 'string' }],
    ['integer or string becomes int-or-string', z.union([z.int(), z.string()]), { 'x-kubernetes-int-or-string': true }],
    ['integer or number widens to number', z.union([z.int().min(0), z.number().min(0)]), { minimum: 0, type: 'number' }],
    ['a string or a boolean is left open', z.union([z.string(), z.boolean()]), { 'x-kubernetes-preserve-unknown-fields': true }],
    ['unknown is open', z.unknown(), { 'x-kubernetes-preserve-unknown-fields': true }],
    ['JSON (a recursive $ref) is open and may be null, with no $ref left', z.json(), { nullable: true, 'x-kubernetes-preserve-unknown-fields': true }],
    [
      'exclusive bounds become OpenAPI v3.0 flags',
      z.number().positive().lt(10),
      {
        exclusiveMaximum: true,
        exclusiveMinimum: true,
        maximum: 10,
        minimum: 0,
        type: 'number',
      },
    ],
    ['formats the API server knows are kept', z.email(), { format: 'email', pattern: expect.any(String) as unknown as string, type: 'string' }],
    ['date-time is kept', z.iso.datetime(), { format: 'date-time', pattern: expect.any(String) as unknown as string, type: 'string' }],
    ['formats it does not know are dropped', z.cidrv4(), { pattern: expect.any(String) as unknown as string, type: 'string' }],
    ['patterns RE2 cannot compile are dropped', z.string().regex(/^(?!admin).+$/), { type: 'string' }],
    ['descriptions are kept', z.string().describe('the thing'), { description: 'the thing', type: 'string' }],
    [
      'a tuple becomes a list of the union of its elements',
      z.tuple([z.string(), z.string().min(2)]),
      {
        items: { type: 'string' },
        maxItems: 2,
        minItems: 2,
        type: 'array',
      },
    ],
    [
      'two patterns at once keep the second in allOf',
      z.intersection(z.string().regex(/^a/), z.string().regex(/b$/)),
      {
        allOf: [{ pattern: 'b$' }],
        pattern: '^a',
        type: 'string',
      },
    ],
    [
      'a discriminated union of closed objects is one object with a oneOf of required fields',
      z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('a'), x: z.string() }), z.strictObject({ kind: z.literal('b'), y: z.int32() })]),
      {
        oneOf: [{ required: ['x'] }, { required: ['y'] }],
        properties: {
          kind: { enum: ['a', 'b'], type: 'string' },
          x: { type: 'string' },
          y: { maximum: 2147483647, minimum: -2147483648, type: 'integer' },
        },
        required: ['kind'],
        type: 'object',
      },
    ],
    [
      'an overlapping union of objects keeps an anyOf of required fields',
      z.union([z.object({ a: z.string(), b: z.string() }), z.object({ a: z.string(), c: z.string() }), z.object({ b: z.string(), c: z.string() })]),
      {
        anyOf: [{ required: ['a', 'b'] }, { required: ['a', 'c'] }, { required: ['b', 'c'] }],
        properties: { a: { type: 'string' }, b: { type: 'string' }, c: { type: 'string' } },
        type: 'object',
      },
    ],
    [
      'a union where one branch needs nothing adds no junctor',
      z.union([z.object({ a: z.string() }), z.object({ b: z.string().optional() })]),
      {
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        type: 'object',
      },
    ],
  ])('%s', (_label, field, expected) => {
    expect(fieldSchema(field)).toEqual(expected);
  });

  test('a recursive schema is inlined once, its recursion preserved as an open object', () => {
    const tree = fieldSchema(Tree);
    expect(tree).toEqual({
      properties: {
        children: { items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, type: 'array' },
        name: { type: 'string' },
      },
      required: ['name'],
      type: 'object',
    });
  });

  test('a shared definition referenced twice is inlined at both places', () => {
    const shared = z.strictObject({ port: z.int().min(1).max(65535) });
    const registry = z.registry<{ id: string }>();
    registry.add(shared, { id: 'Port' });
    const json = z.toJSONSchema(z.strictObject({ a: shared, b: z.array(shared) }), { io: 'input', metadata: registry });
    expect(JSON.stringify(json)).toContain('$ref');
    const schema = toStructuralSchema(json);
    expect(JSON.stringify(schema)).not.toContain('$ref');
    expect(schema.properties?.['b']?.items).toEqual(schema.properties?.['a']);
    expect(structuralSchemaProblems(schema)).toEqual([]);
  });

  test('keys are sorted at every level', () => {
    const schema = toStructuralSchema(z.toJSONSchema(z.strictObject({ zeta: z.string(), alpha: z.strictObject({ y: z.int(), x: z.int() }) })));
    expect(Object.keys(schema)).toEqual(['properties', 'required', 'type']);
    expect(Object.keys(schema.properties ?? {})).toEqual(['alpha', 'zeta']);
    expect(Object.keys(schema.properties?.['alpha']?.properties ?? {})).toEqual(['x', 'y']);
  });
});

describe('re2PatternProblem', () => {
  test.each([
    ['^[a-z]+$', undefined],
    ['^(?:0|[1-9][0-9]*)$', undefined],
    ['^[(?=x)]$', undefined],
    ['\\/path', undefined],
    ['^(?=a)', 'uses lookaround, which RE2 lacks'],
    ['(?<!a)b', 'uses lookaround, which RE2 lacks'],
    ['(a)\\1', 'uses a backreference, which RE2 lacks'],
    ['\\u00e9', 'uses \\u escapes, which RE2 lacks (use \\x{…})'],
  ])('%s', (pattern, problem) => {
    expect(re2PatternProblem(pattern)).toBe(problem);
  });

  test('a pattern that does not compile', () => {
    expect(re2PatternProblem('([a-z]')).toMatch(/^does not compile/);
  });
});

describe('structuralSchemaProblems', () => {
  const root = (spec: unknown): unknown => ({ type: 'object', properties: { spec } });

  test('accepts int-or-string spelled out as anyOf of integer and string', () => {
    expect(
      structuralSchemaProblems(
        root({ type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }),
      ),
    ).toEqual([]);
  });

  test.each<[string, unknown, string]>([
    ['a root that is not an object', { type: 'string' }, 'openAPIV3Schema: the root must have type object'],
    ['a node without a type', root({ type: 'object', properties: { a: {} } }), 'openAPIV3Schema.properties.spec.properties.a: type is required'],
    ['a $ref', root({ $ref: '#/$defs/Spec' }), 'openAPIV3Schema.properties.spec: "$ref" is not a field of a CRD schema'],
    ['$defs', { type: 'object', $defs: {} }, 'openAPIV3Schema: "$defs" is not a field of a CRD schema'],
    ['const', root({ type: 'string', const: 'x' }), '"const" is not a field of a CRD schema'],
    ['propertyNames', root({ type: 'object', propertyNames: { type: 'string' }, additionalProperties: { type: 'string' } }), '"propertyNames" is not a field'],
    [
      'additionalProperties: false',
      root({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }),
      'additionalProperties must be a schema, not a boolean',
    ],
    [
      'properties with additionalProperties',
      root({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }),
      'properties and additionalProperties are mutually exclusive',
    ],
    ['an unknown type', root({ type: 'null' }), 'type must be one of'],
    ['a type list', root({ type: ['string', 'null'] }), 'type must be one of'],
    [
      'a type inside anyOf',
      root({ type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ type: 'object' }] }),
      'openAPIV3Schema.properties.spec.anyOf[0]: type is not allowed inside',
    ],
    ['a description inside oneOf', root({ type: 'string', oneOf: [{ description: 'x' }] }), 'description is not allowed inside'],
    [
      'a field specified only in a junctor',
      root({ type: 'object', properties: { a: { type: 'string' } }, oneOf: [{ properties: { b: {} } }] }),
      'property "b" must also be specified outside the junctor',
    ],
    [
      'a junctor requiring an unknown field',
      root({ type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ required: ['b'] }] }),
      'required field "b" is not among the outer properties',
    ],
    [
      'a required field that is not a property',
      root({ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }),
      'required field "b" is not among the properties',
    ],
    ['uniqueItems', root({ type: 'array', items: { type: 'string' }, uniqueItems: true }), 'uniqueItems cannot be true'],
    ['an array without items', root({ type: 'array' }), 'an array needs items'],
    ['a tuple', root({ type: 'array', items: [{ type: 'string' }] }), 'items must be a single schema'],
    ['an unknown format', root({ type: 'string', format: 'cidrv4' }), 'format "cidrv4" is not one the API server knows'],
    ['a format on a number', root({ type: 'integer', format: 'email' }), 'format email only applies to strings'],
    ['a lookahead pattern', root({ type: 'string', pattern: '^(?!x)' }), 'uses lookaround'],
    ['a numeric exclusiveMinimum', root({ type: 'number', exclusiveMinimum: 0 }), 'exclusiveMinimum must be a boolean'],
    ['an enum value of the wrong type', root({ type: 'string', enum: ['a', 1] }), 'enum value 1 is not of type string'],
    ['int-or-string with a type', root({ type: 'string', 'x-kubernetes-int-or-string': true }), 'type must be empty with x-kubernetes-int-or-string'],
    ['preserve-unknown-fields: false', root({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }), 'must be true when set'],
    [
      'restrictions on metadata beyond name',
      { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } },
      'only name and generateName may be restricted',
    ],
  ])('rejects %s', (_label, schema, problem) => {
    const problems = structuralSchemaProblems(schema);
    expect(problems.some((line) => line.includes(problem))).toBe(true);
  });
});

describe('what the API server does with a value', () => {
  const schema: StructuralSchema = {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, pattern: '^[a-z]+$' },
      mode: { type: 'string', enum: ['A', 'B'] },
      port: { 'x-kubernetes-int-or-string': true },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      list: { type: 'array', maxItems: 1, items: { type: 'object', properties: { a: { type: 'integer', minimum: 1 } } } },
    },
    oneOf: [{ required: ['mode'] }, { required: ['port'] }],
  };

  test('a value that fits has no violations and nothing pruned', () => {
    const value = { name: 'ok', mode: 'A', labels: { x: 'y' }, extra: { any: [1, { deep: true }] }, list: [{ a: 1 }] };
    expect(schemaViolations(value, schema)).toEqual([]);
    expect(prunedFields(value, schema)).toEqual([]);
  });

  test('violations name the field', () => {
    const value = { name: 'NO', mode: 'C', port: 1.5, labels: { x: 1 }, list: [{ a: 0 }, { a: 2 }] };
    expect(schemaViolations(value, schema)).toEqual([
      'name: does not match ^[a-z]+$',
      'mode: "C" is not one of ["A","B"]',
      'port: expected an integer or a string',
      'labels.x: expected string, got 1',
      'list: more than 1 items',
      'list[0].a: below the minimum 1',
      '<root>: must match exactly one of the oneOf alternatives',
    ]);
    expect(schemaViolations({ mode: 'A' }, schema)).toEqual(['<root>: missing required field name']);
  });

  test('unknown fields are pruned except where the schema preserves them', () => {
    expect(prunedFields({ name: 'a', bogus: 1, list: [{ a: 1, b: 2 }], extra: { kept: 1 } }, schema)).toEqual(['bogus', 'list[0].b']);
  });
});
