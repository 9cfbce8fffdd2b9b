import { z } from 'zod';
import { requiredString, stringMapSchema } from './common-schemas.js';

const ownerReferenceSchema = z.strictObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/**
 * Kubernetes ObjectMeta. Every field a server may return is accepted, so an object read back from
 * the cluster validates like the one that was applied; `name` is required because a policy is
 * addressed by it.
 */
export const objectMetaSchema = z.strictObject({
  name: requiredString('the name of the resource').min(1, { error: 'expected a non-empty name' }),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().optional(),
  deletionGracePeriodSeconds: z.int().optional(),
  labels: stringMapSchema.optional(),
  annotations: stringMapSchema.optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
  managedFields: z.array(z.record(z.string(), z.unknown())).optional(),
  selfLink: z.string().optional(),
});

/** Status written by the controllers; its shape is theirs, so it is kept as given. */
export const statusSchema = z.record(z.string(), z.unknown());

export type ObjectMeta = z.infer<typeof objectMetaSchema>;
