import { z } from 'zod';

/**
 * A chart's `values.schema.json` from its typed values (zod): Helm validates every install and
 * upgrade against it and refuses unknown keys and bad values naming the value.
 */
export function chartValuesJsonSchema(values: z.ZodType): string {
  const schema = z.toJSONSchema(values, { target: 'draft-7', unrepresentable: 'any' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}
