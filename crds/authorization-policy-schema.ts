import { z } from 'zod';
import { policyTargetReferenceSchema, requiredString, workloadSelectorSchema } from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { SECURITY_API_VERSIONS } from './kinds.js';

export const AUTHORIZATION_ACTIONS = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'] as const;

const values = z.array(z.string().min(1));

/** Who sends the request. Fields are ANDed; values within a field are ORed. */
export const sourceSchema = z.strictObject({
  principals: values.optional(),
  notPrincipals: values.optional(),
  requestPrincipals: values.optional(),
  notRequestPrincipals: values.optional(),
  namespaces: values.optional(),
  notNamespaces: values.optional(),
  serviceAccounts: z.array(z.string().min(1).max(320)).max(16).optional(),
  notServiceAccounts: z.array(z.string().min(1).max(320)).max(16).optional(),
  ipBlocks: values.optional(),
  notIpBlocks: values.optional(),
  remoteIpBlocks: values.optional(),
  notRemoteIpBlocks: values.optional(),
  trustDomains: values.optional(),
  notTrustDomains: values.optional(),
});

/** What the request asks for. Ports are strings, as in the reference API. */
export const operationSchema = z.strictObject({
  hosts: values.optional(),
  notHosts: values.optional(),
  ports: values.optional(),
  notPorts: values.optional(),
  methods: values.optional(),
  notMethods: values.optional(),
  paths: values.optional(),
  notPaths: values.optional(),
});

export const conditionSchema = z.strictObject({
  key: requiredString('an attribute key such as request.headers[x-token] or source.ip').min(1, {
    error: 'expected a non-empty attribute key such as request.headers[x-token] or source.ip',
  }),
  values: values.optional(),
  notValues: values.optional(),
});

export const ruleSchema = z.strictObject({
  from: z
    .array(z.strictObject({ source: sourceSchema.optional() }))
    .max(512)
    .optional(),
  to: z.array(z.strictObject({ operation: operationSchema.optional() })).optional(),
  when: z.array(conditionSchema).optional(),
});

export const extensionProviderSchema = z.strictObject({
  name: z.string().optional(),
});

export const authorizationPolicySpecSchema = z.strictObject({
  selector: workloadSelectorSchema.optional(),
  targetRef: policyTargetReferenceSchema.optional(),
  targetRefs: z.array(policyTargetReferenceSchema).max(16).optional(),
  rules: z.array(ruleSchema).max(512).optional(),
  /** Absent means ALLOW. */
  action: z.enum(AUTHORIZATION_ACTIONS).optional(),
  /** Only with action CUSTOM: the extension provider that decides. */
  provider: extensionProviderSchema.optional(),
});

export const authorizationPolicySchema = z.strictObject({
  apiVersion: z.enum(SECURITY_API_VERSIONS),
  kind: z.literal('AuthorizationPolicy'),
  metadata: objectMetaSchema,
  spec: authorizationPolicySpecSchema,
  status: statusSchema.optional(),
});

export type AuthorizationAction = (typeof AUTHORIZATION_ACTIONS)[number];
export type AuthorizationSource = z.infer<typeof sourceSchema>;
export type AuthorizationOperation = z.infer<typeof operationSchema>;
export type AuthorizationCondition = z.infer<typeof conditionSchema>;
export type AuthorizationRule = z.infer<typeof ruleSchema>;
export type AuthorizationPolicySpec = z.infer<typeof authorizationPolicySpecSchema>;
export type AuthorizationPolicy = z.infer<typeof authorizationPolicySchema>;
