/**
 * Golden files, one convention for the whole tree: a case is `testdata/<area>/<case>.in.yaml`
 * (what goes in) beside `testdata/<area>/<case>.golden.yaml` (what must come out). A test compares
 * what it produced with the golden file, or rewrites the file when run with REFRESH_GOLDEN=1
 * (then review the diff before committing it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from '@jest/globals';
import { parse, stringify } from 'yaml';
import { processEnvironment } from '../runtime/index.js';

const IN = '.in.yaml';
const GOLDEN = '.golden.yaml';

/** True when the run rewrites golden files instead of comparing with them. */
export const refreshingGolden = processEnvironment()['REFRESH_GOLDEN'] === '1';

/** The case names of an area folder: its `<case>.in.yaml` files, sorted. */
export function goldenCases(folder: string): string[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith(IN))
    .map((file) => file.slice(0, -IN.length))
    .sort();
}

/** The path of a case's input. */
export function caseInput(folder: string, name: string): string {
  return join(folder, `${name}${IN}`);
}

/** A case's input, parsed as one YAML document (multi-document inputs read the file themselves). */
export function readCaseInput<T>(folder: string, name: string): T {
  return parse(readFileSync(caseInput(folder, name), 'utf8')) as T;
}

/** How golden YAML is written: no folding of long lines, no anchors for repeated objects. */
export function goldenYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Compares `value`, written as golden YAML, with `<folder>/<name>.golden.yaml` (or rewrites it). */
export function expectGolden(folder: string, name: string, value: unknown): void {
  expectGoldenText(join(folder, `${name}${GOLDEN}`), goldenYaml(value));
}

/** The text of a case's golden file, parsed. */
export function readGolden<T>(folder: string, name: string): T {
  return parse(readFileSync(join(folder, `${name}${GOLDEN}`), 'utf8')) as T;
}

/** Compares `actual` with the file's text byte for byte (or rewrites it). */
export function expectGoldenText(file: string, actual: string): void {
  if (refreshingGolden) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) {
    throw new Error(`golden file ${file} does not exist: run the test with REFRESH_GOLDEN=1 to write it, then review it`);
  }
  expect(actual).toBe(readFileSync(file, 'utf8'));
}
