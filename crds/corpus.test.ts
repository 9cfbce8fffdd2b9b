import { describe, test, expect } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { validateResource, type ValidationIssue } from './index.js';

/**
 * Every `<case>.yaml` under testdata/corpus/<kind>/ is validated and compared, message for message,
 * with its `<case>.expected.yaml` sidecar: `errors` and `warnings` as lists of {path, message}, and
 * optionally `servicePorts`, the container ports that services bind for the selected workloads.
 * `valid-*` cases must have no errors (a sidecar is needed only for warnings); `invalid-*` cases
 * must have at least one error.
 */
const CORPUS = join(dirname(fileURLToPath(import.meta.url)), 'testdata', 'corpus');
const MIN_VALID_PER_KIND = 4;
const MIN_INVALID_PER_KIND = 8;

type Expected = { servicePorts?: number[]; errors: ValidationIssue[]; warnings: ValidationIssue[] };
type Case = { kind: string; name: string; file: string; sidecar: string };

function listCases(): Case[] {
  const cases: Case[] = [];
  for (const kind of readdirSync(CORPUS).sort()) {
    for (const file of readdirSync(join(CORPUS, kind)).sort()) {
      if (!file.endsWith('.yaml') || file.endsWith('.expected.yaml')) continue;
      const name = file.slice(0, -'.yaml'.length);
      cases.push({ kind, name, file: join(CORPUS, kind, file), sidecar: join(CORPUS, kind, `${name}.expected.yaml`) });
    }
  }
  return cases;
}

function readExpected(path: string): Expected {
  if (!existsSync(path)) return { errors: [], warnings: [] };
  const raw = parse(readFileSync(path, 'utf8')) as Partial<Expected> | null;
  return { ...(raw?.servicePorts ? { servicePorts: raw.servicePorts } : {}), errors: raw?.errors ?? [], warnings: raw?.warnings ?? [] };
}

function sorted(issues: readonly ValidationIssue[]): ValidationIssue[] {
  return issues.map(({ path, message }) => ({ path, message })).sort((a, b) => a.path.localeCompare(b.path) || a.message.localeCompare(b.message));
}

const cases = listCases();

describe('policy corpus', () => {
  test.each(cases.map((c) => [`${c.kind}/${c.name}`, c] as const))('%s', (_label, c) => {
    const document: unknown = parse(readFileSync(c.file, 'utf8'));
    const expected = readExpected(c.sidecar);
    const ports = expected.servicePorts;
    const result = validateResource(document, ports ? { servicePortsForWorkload: () => ports } : {});

    expect({ errors: sorted(result.errors), warnings: sorted(result.warnings) }).toEqual({
      errors: sorted(expected.errors),
      warnings: sorted(expected.warnings),
    });
    if (c.name.startsWith('invalid-')) {
      expect(existsSync(c.sidecar)).toBe(true);
      expect(result.errors.length).toBeGreaterThan(0);
      expect(result.resource).toBeUndefined();
    } else {
      expect(c.name.startsWith('valid-')).toBe(true);
      expect(result.resource).toEqual(document);
    }
  });

  test('each kind has enough valid and invalid examples', () => {
    const kinds = [...new Set(cases.map((c) => c.kind))];
    expect(kinds).toEqual([
      'authorization-policy',
      'destination-rule',
      'gateway',
      'peer-authentication',
      'request-authentication',
      'service-entry',
      'virtual-service',
      'workload-entry',
      'workload-group',
    ]);
    for (const kind of kinds) {
      const names = cases.filter((c) => c.kind === kind).map((c) => c.name);
      expect(names.filter((n) => n.startsWith('valid-')).length).toBeGreaterThanOrEqual(MIN_VALID_PER_KIND);
      expect(names.filter((n) => n.startsWith('invalid-')).length).toBeGreaterThanOrEqual(MIN_INVALID_PER_KIND);
    }
  });

  test('every sidecar belongs to a case', () => {
    for (const kind of readdirSync(CORPUS)) {
      for (const file of readdirSync(join(CORPUS, kind))) {
        if (!file.endsWith('.expected.yaml')) continue;
        expect(existsSync(join(CORPUS, kind, file.replace(/\.expected\.yaml$/, '.yaml')))).toBe(true);
      }
    }
  });
});
