/** Checks every chart's sources pass: the schema is the typed source's, values.yaml fits it, the README names every value. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { parse } from 'yaml';
import type { z } from 'zod';
import { chartValuesJsonSchema } from '../../../install/index.js';
import { refreshingGolden } from '../../../testing/golden.js';

/** values.schema.json equals what the zod schema generates (REFRESH_GOLDEN=1 rewrites it). */
export function expectSchemaFresh(chartDir: string, schema: z.ZodType): void {
  const file = join(chartDir, 'values.schema.json');
  const generated = chartValuesJsonSchema(schema);
  if (refreshingGolden) writeFileSync(file, generated);
  expect(readFileSync(file, 'utf8')).toBe(generated);
}

/** values.yaml parses under the schema; the README names every value (below `opaque` keys, whose insides are free-form). */
export function expectValuesDocumented(chartDir: string, schema: z.ZodType, opaque: readonly string[]): void {
  const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
  expect(schema.safeParse(values).error).toBeUndefined();
  const readme = readFileSync(join(chartDir, 'README.md'), 'utf8');
  const keys = (value: unknown, prefix: string): string[] =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.entries(value).flatMap(([key, child]) => [`${prefix}${key}`, ...(opaque.includes(key) ? [] : keys(child, `${prefix}${key}.`))])
      : [];
  expect(keys(values, '').filter((key) => !readme.includes(`\`${key}\``))).toEqual([]);
}
