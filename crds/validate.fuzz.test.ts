import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { fuzzParameters } from '../testing/fuzz.js';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { validateResource } from './index.js';

// The policy validators on an attacker's input: whatever the object, an answer (errors with a
// field path, or none), never a throw. Two sources: arbitrary JSON values, and the sample policies
// with one subtree replaced by arbitrary JSON (deep, plausible-looking resources).
const SAMPLES = join(PROJECT_ROOT, 'deploy', 'samples', 'policies');
const policies = readdirSync(SAMPLES)
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) => parseAllDocuments(readFileSync(join(SAMPLES, file), 'utf8')).map((d) => d.toJS() as unknown));

function expectAnswer(value: unknown): void {
  const result = validateResource(value);
  expect(Array.isArray(result.errors) && Array.isArray(result.warnings)).toBe(true);
  for (const issue of [...result.errors, ...result.warnings]) {
    expect(typeof issue.path).toBe('string');
    expect(typeof issue.message === 'string' && issue.message.length > 0).toBe(true);
  }
}

/** Every path to a value inside `value`. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return [prefix, ...value.flatMap((item, i) => paths(item, [...prefix, i]))];
  if (typeof value === 'object' && value !== null) return [prefix, ...Object.entries(value).flatMap(([key, item]) => paths(item, [...prefix, key]))];
  return [prefix];
}

function replaced(value: unknown, path: readonly (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<string | number, unknown>;
  copy[head as string | number] = replaced(copy[head as string | number], rest, replacement);
  return copy;
}

describe('validateResource under fuzzing', () => {
  test('any JSON value gets an answer, never a throw', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => expectAnswer(value)),
      fuzzParameters(),
    );
  });

  test('a sample policy with any subtree replaced gets an answer naming a path', () => {
    expect(policies.length).toBeGreaterThan(3);
    const mutation = fc.record({ policy: fc.constantFrom(...policies), pick: fc.nat(), replacement: fc.jsonValue({ maxDepth: 3 }) });
    fc.assert(
      fc.property(mutation, ({ policy, pick, replacement }) => {
        const all = paths(policy);
        expectAnswer(replaced(policy, all[pick % all.length] ?? [], replacement));
      }),
      fuzzParameters(),
    );
  });
});
