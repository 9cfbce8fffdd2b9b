import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import { newRenderedYamlReader } from './rendered-yaml-reader.js';
import { parseRenderedYaml } from './rendered-yaml.js';

/** Reads each text in turn with one reader, and each with a fresh parse: the same values, the same field order. */
function expectSameReads(texts: readonly string[]): { parses: number } {
  let parses = 0;
  const reader = newRenderedYamlReader((text) => {
    // Documents, not the scalars parsed alone.
    if (text.includes('\n')) parses++;
    return parseRenderedYaml(text);
  });
  for (const text of texts) {
    const read = reader.read(text);
    const fresh = parseRenderedYaml(text);
    expect(read).toEqual(fresh);
    expect(JSON.stringify(read)).toBe(JSON.stringify(fresh));
  }
  return { parses };
}

const pod = (name: string, port: string, extra = ''): string =>
  `metadata:\n  labels:\n    app: ${name}\n    service.mesh.io/canonical-name: "${name}"\nspec:\n  containers:\n  - name: mesh-proxy\n    args:\n    - "--port"\n    - ${port}\n    env:\n    - name: NAME\n      value: "${name}"\n${extra}`;

describe('the rendered YAML reader', () => {
  test('texts that differ in scalars are read from the first one, each scalar resolved as in a full parse', () => {
    const texts = ['a', 'b', 'c-1', 'true', '15021', 'null', 'x.y_z', 'é'].map((name, i) => pod(name, String(15000 + i)));
    // The first is parsed whole; the second needs a probe for each of its four changed lines; the
    // rest are edits, but for the plain é (beyond the plain words taken as one scalar): parsed whole.
    expect(expectSameReads(texts).parses).toBe(1 + 4 + 1);
  });

  test('what is not one scalar on a line is parsed whole', () => {
    const block = (inner: string) => `data:\n  script: |\n    key: "${inner}"\n  other: "x"\n`;
    const anchored = (value: string) => `a: &shared\n  name: "${value}"\nb: *shared\n`;
    const flow = (value: string) => `m: {name: "${value}"}\n`;
    const quotedMultiline = (value: string) => `m: "first\n  ${value}"\n`;
    const comment = (value: string) => `m: "${value}" # note\n`;
    const keyChange = (key: string) => `${key}: "v"\nother: 1\n`;
    const structure = (value: string) => (value === 'b' ? 'm:\n  nested: 1\n' : `m: "${value}"\n`);
    const sentinel = (value: string) => `m: "${value}"\nn: "\\u0001rendered-yaml-probe"\n`;
    for (const make of [block, anchored, flow, quotedMultiline, comment, keyChange, structure, sentinel]) expectSameReads(['a', 'b', 'c', 'a'].map(make));
  });

  test('an edited value is frozen and shares what the edit did not touch with the first one read', () => {
    const reader = newRenderedYamlReader();
    const first = reader.read(pod('a', '1')) as { metadata: unknown; spec: { containers: { args: unknown; env: unknown }[] } };
    const second = reader.read(pod('b', '1')) as typeof first;
    expect(Object.isFrozen(second)).toBe(true);
    expect(second.spec.containers[0]?.args).toBe(first.spec.containers[0]?.args);
    expect(second.spec.containers[0]?.env).not.toBe(first.spec.containers[0]?.env);
    expect(Object.isFrozen(second.spec.containers[0]?.env)).toBe(true);
  });

  test('a broken text fails as a full parse does', () => {
    const reader = newRenderedYamlReader();
    reader.read('a: "x"\nb: 1\n');
    expect(() => reader.read('a: "x\nb: 1\n')).toThrow();
  });

  test('any sequence of small edits reads as full parses do', () => {
    const base = pod(
      'reviews',
      '15001',
      '    ports:\n    - containerPort: 15090\n      name: "http-envoy-prom"\n  volumes:\n  - name: "mesh-envoy"\n    emptyDir: {}\n',
    );
    const lines = base.split('\n');
    const replacement = fc.constantFrom('"x"', '"y\\"z"', 'plain', '12', '1.5', 'true', '~', '"a: b"', '[1, 2]', '{a: 1}', '|', '&x y', '*x', '- z', '"', ' ');
    const editArb = fc.array(fc.tuple(fc.nat(lines.length - 1), replacement, fc.boolean()), { maxLength: 3 });
    fc.assert(
      fc.property(fc.array(editArb, { minLength: 1, maxLength: 6 }), (edits) => {
        const texts = [
          base,
          ...edits.map((changes) => {
            const copy = [...lines];
            for (const [at, value, asValue] of changes) {
              const line = copy[at] as string;
              const colon = line.lastIndexOf(': ');
              copy[at] = asValue && colon >= 0 ? `${line.slice(0, colon + 2)}${value}` : `${line}${value}`;
            }
            return copy.join('\n');
          }),
        ];
        const parsable = texts.filter((text) => {
          try {
            parseRenderedYaml(text);
            return true;
          } catch {
            return false;
          }
        });
        expectSameReads(parsable);
      }),
      { ...fuzzParameters(), numRuns: 300 },
    );
  });
});
