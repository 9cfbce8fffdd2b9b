import { z } from 'zod';

/** "a, b or c": how messages list alternatives. */
export function listWords(words: readonly string[], conjunction = 'or'): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`;
}

/** A refinement for proto `oneof` groups: at most one of the named fields may be set. */
export function atMostOneOf<const K extends string>(...keys: K[]): [(value: Partial<Record<K, unknown>>) => boolean, { error: string }] {
  return [(value) => keys.filter((key) => value[key] !== undefined).length <= 1, { error: `only one of ${listWords(keys)} may be set` }];
}

/** A string field the proto marks required; `what` completes "required: expected …" when it is missing. */
export function requiredString(what: string) {
  return z.string({
    error: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? `required: expected ${what}` : undefined),
  });
}

export { durationOrZeroSchema, durationSchema } from './duration-schemas.js';

export const portNumberSchema = z.int().min(1).max(65535);

export const int32Schema = z.int32();
export const nonNegativeInt32Schema = z.int32().min(0);
export const uint32Schema = z.uint32();
export const uint64Schema = z.int().min(0);

export const stringMapSchema = z.record(z.string(), z.string());

/** `{number}`: a port chosen by its number. */
export const portSelectorSchema = z.strictObject({
  number: portNumberSchema,
});

/** Selects workloads by their labels, in the namespace of the resource. */
export const workloadSelectorSchema = z.strictObject({
  matchLabels: stringMapSchema.optional(),
});

/** A policy attached to a Service, ServiceEntry, Gateway or GatewayClass instead of selected workloads. */
export const policyTargetReferenceSchema = z.strictObject({
  group: z
    .string()
    .max(253)
    .regex(/^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, {
      error: (issue) => `expected an API group such as gateway.networking.k8s.io, or "" for the core group, got ${JSON.stringify(issue.input)}`,
    })
    .optional(),
  kind: requiredString('a kind such as Service')
    .min(1)
    .max(63)
    .regex(/^$|^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/, {
      error: (issue) => `expected a kind name such as Service, got ${JSON.stringify(issue.input)}`,
    }),
  name: requiredString('the name of the target').min(1).max(253),
  namespace: z.string().optional(),
});

/** How a string is matched: exactly, by prefix, or by an RE2 regular expression. Empty means presence. */
export const stringMatchSchema = z
  .strictObject({
    exact: z.string().optional(),
    prefix: z.string().optional(),
    regex: z.string().optional(),
  })
  .refine(...atMostOneOf('exact', 'prefix', 'regex'));

/** A percentage as a double, 0 to 100. */
export const percentSchema = z.strictObject({
  value: z.number().min(0).max(100),
});

/** Namespaces a resource is visible to: `.` (its own), `*` (all) or namespace names. */
export const exportToSchema = z.array(z.string());
