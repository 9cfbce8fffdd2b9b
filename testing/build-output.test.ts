import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { PROJECT_ROOT } from './run-bin.js';

// `npm run build` ships the programs only: no test, no test support, no benchmark.
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

describe('the build output', () => {
  test('holds no test, test support or benchmark', () => {
    const shipped = filesUnder(join(PROJECT_ROOT, 'dist')).map((file) => relative(join(PROJECT_ROOT, 'dist'), file));
    expect(shipped.length).toBeGreaterThan(100);
    const testOnly = shipped.filter((file) => /(^|\/)testing\/|\.test\.js|^bench\//.test(file));
    expect(testOnly).toEqual([]);
  });
});
