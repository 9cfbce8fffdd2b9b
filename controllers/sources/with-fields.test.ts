import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { checkConfigFile } from './config-file-checker.js';
import { normalizeConfigObject } from './config-object-resolver.js';
import { withFields } from './with-fields.js';

describe('withFields', () => {
  test.each([
    ['new keys after the old ones', { a: 1, b: { c: 2 } }, { d: 3, e: 4 }],
    ['a key of both: its old place, the new value', { a: 1, b: 2, c: 3 }, { b: 20, d: 4 }],
    ['integer-like keys', { '8080': 'x', name: 'n' }, { '80': 'y' }],
    ['nothing to add', { a: 1 }, {}],
  ])('%s: what the spread gives, keys in the same order', (_name, base, extra) => {
    const out = withFields(base, extra);
    expect(out).toEqual({ ...base, ...extra });
    expect(Object.keys(out)).toEqual(Object.keys({ ...base, ...extra }));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  test('a `__proto__` key from a file stays data: no prototype is set, here or on served objects', () => {
    const metadata = parse('name: x\n__proto__:\n  polluted: true\n') as Record<string, unknown>;
    const out = withFields(metadata, { namespace: 'default' });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['name', '__proto__', 'namespace']);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: true });
    const normalized = normalizeConfigObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata });
    expect((normalized.metadata as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  test('a policy with a `__proto__` key in its metadata is rejected by name, as an unknown field', () => {
    const text = 'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  name: p\n  __proto__: { namespace: Evil }\nspec: {}\n';
    const [document] = checkConfigFile('/c/p.yaml', text).documents;
    expect(document?.check?.errors.map((issue) => issue.path)).toEqual(['metadata.__proto__']);
    expect(document?.check?.typed).toBeUndefined();
  });
});
