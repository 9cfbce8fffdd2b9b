import { describe, test, expect } from '@jest/globals';
import { z } from 'zod';
import { KIND_NAMES, KINDS, RESOURCE_SCHEMAS, SPEC_SCHEMAS, apiVersionOf, servedApiVersionsOf } from './index.js';

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
};

function at(schema: JsonSchema, path: string): JsonSchema {
  let node = schema;
  for (const step of path.split('.')) {
    const next = step === '[]' ? node.items : node.properties?.[step];
    if (next === undefined) throw new Error(`no ${step} in ${path}`);
    node = next;
  }
  return node;
}

const specJson = Object.fromEntries(KIND_NAMES.map((kind) => [kind, z.toJSONSchema(SPEC_SCHEMAS[kind], { io: 'input' }) as JsonSchema]));

describe('schemas as JSON Schema (what the CRD generator consumes)', () => {
  test.each(KIND_NAMES)('%s converts, and every object in it is closed', (kind) => {
    const open: string[] = [];
    const walk = (node: JsonSchema, path: string): void => {
      if (node.type === 'object' && node.properties !== undefined && node.additionalProperties !== false) open.push(path);
      for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`);
      if (node.items) walk(node.items, `${path}[]`);
      if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}{}`);
    };
    walk(specJson[kind] as JsonSchema, 'spec');
    expect(open).toEqual([]);
    expect(() => z.toJSONSchema(RESOURCE_SCHEMAS[kind], { io: 'input' })).not.toThrow();
  });

  test('enums, required fields, ranges and duration patterns survive conversion', () => {
    const { PeerAuthentication, AuthorizationPolicy, DestinationRule, Gateway, VirtualService, RequestAuthentication } = specJson as Record<string, JsonSchema>;
    expect(at(PeerAuthentication!, 'mtls.mode').enum).toEqual(['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT']);
    expect(at(AuthorizationPolicy!, 'action').enum).toEqual(['ALLOW', 'DENY', 'AUDIT', 'CUSTOM']);
    expect(at(DestinationRule!, 'trafficPolicy.tls.mode').enum).toEqual(['DISABLE', 'SIMPLE', 'MUTUAL', 'MESH_MUTUAL']);
    expect(at(Gateway!, 'servers.[].tls.mode').enum).toEqual(['PASSTHROUGH', 'SIMPLE', 'MUTUAL', 'AUTO_PASSTHROUGH', 'MESH_MUTUAL', 'OPTIONAL_MUTUAL']);
    expect(DestinationRule!.required).toEqual(['host']);
    expect(at(Gateway!, 'servers.[]').required).toEqual(['port', 'hosts']);
    expect(at(Gateway!, 'servers.[].port').required).toEqual(['number', 'protocol', 'name']);
    expect(at(VirtualService!, 'http.[].route.[].destination').required).toEqual(['host']);
    expect(at(AuthorizationPolicy!, 'rules.[].when.[]').required).toEqual(['key']);
    const port = at(DestinationRule!, 'trafficPolicy.portLevelSettings.[].port.number');
    expect([port.minimum, port.maximum]).toEqual([1, 65535]);
    expect(at(RequestAuthentication!, 'jwtRules.[].timeout').pattern).toBeDefined();
    expect(at(VirtualService!, 'http.[].timeout').type).toBe('string');
  });
});

describe('KINDS', () => {
  test.each(KIND_NAMES)('%s: names follow the kind and the schema pins its apiVersion and kind', (kind) => {
    const info = KINDS[kind];
    expect(info.kind).toBe(kind);
    expect(info.singular).toBe(kind.toLowerCase());
    expect(info.plural.startsWith(info.singular.replace(/y$/, ''))).toBe(true);
    expect(info.namespaced).toBe(true);
    expect(info.categories).toContain('mesh-io');
    const whole = z.toJSONSchema(RESOURCE_SCHEMAS[kind], { io: 'input' }) as { properties: Record<string, { const?: string; enum?: string[] }> };
    expect(whole.properties['apiVersion']?.enum).toEqual(servedApiVersionsOf(kind));
    expect(whole.properties['apiVersion']?.enum).toContain(apiVersionOf(kind));
    expect(whole.properties['kind']?.const).toBe(kind);
  });

  test('short names are unique', () => {
    const shortNames = KIND_NAMES.flatMap((kind) => KINDS[kind].shortNames);
    expect(new Set(shortNames).size).toBe(shortNames.length);
    expect(shortNames.sort()).toEqual(['ap', 'dr', 'gw', 'pa', 'ra', 'se', 'vs', 'we', 'wg']);
  });
});
