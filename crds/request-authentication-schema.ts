import { z } from 'zod';
import { durationSchema, policyTargetReferenceSchema, requiredString, workloadSelectorSchema } from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { SECURITY_API_VERSIONS } from './kinds.js';

const nonEmptyString = z.string().min(1);

/** Where to look for a token besides `Authorization: Bearer`. */
export const jwtHeaderSchema = z.strictObject({
  name: requiredString('a header name').min(1, { error: 'expected a non-empty header name' }),
  /** Stripped from the header value before the token is read, e.g. `Bearer `. */
  prefix: z.string().optional(),
});

export const claimToHeaderSchema = z.strictObject({
  header: requiredString('a header name').regex(/^[-_A-Za-z0-9]+$/, {
    error: (issue) => `expected a header name of letters, digits, '-' and '_', got ${JSON.stringify(issue.input)}`,
  }),
  claim: requiredString('a claim name').min(1),
});

export const jwtRuleSchema = z.strictObject({
  issuer: nonEmptyString.optional(),
  audiences: z.array(nonEmptyString).optional(),
  jwksUri: z.string().min(1).max(2048).optional(),
  /** An inline JSON Web Key Set, instead of jwksUri. */
  jwks: z.string().optional(),
  fromHeaders: z.array(jwtHeaderSchema).optional(),
  fromParams: z.array(nonEmptyString).optional(),
  fromCookies: z.array(nonEmptyString).optional(),
  outputPayloadToHeader: z.string().optional(),
  forwardOriginalToken: z.boolean().optional(),
  outputClaimToHeaders: z.array(claimToHeaderSchema).optional(),
  /** How long to wait for the JWKS fetch. */
  timeout: z.optional(durationSchema),
  /** Claims whose string value holds several space-separated values (like `scope`). */
  spaceDelimitedClaims: z.array(nonEmptyString).max(64).optional(),
});

export const requestAuthenticationSpecSchema = z.strictObject({
  selector: workloadSelectorSchema.optional(),
  targetRef: policyTargetReferenceSchema.optional(),
  targetRefs: z.array(policyTargetReferenceSchema).max(16).optional(),
  jwtRules: z.array(jwtRuleSchema).max(4096).optional(),
});

export const requestAuthenticationSchema = z.strictObject({
  apiVersion: z.enum(SECURITY_API_VERSIONS),
  kind: z.literal('RequestAuthentication'),
  metadata: objectMetaSchema,
  spec: requestAuthenticationSpecSchema,
  status: statusSchema.optional(),
});

export type JwtRule = z.infer<typeof jwtRuleSchema>;
export type RequestAuthenticationSpec = z.infer<typeof requestAuthenticationSpecSchema>;
export type RequestAuthentication = z.infer<typeof requestAuthenticationSchema>;
