import { z } from 'zod';
import { stringMapSchema, uint32Schema } from './common-schemas.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';

/**
 * One workload outside Kubernetes (a VM, a bare-metal host), or an endpoint of a ServiceEntry: the
 * same shape serves both, and a WorkloadGroup's template.
 */
export const workloadEntrySpecSchema = z.strictObject({
  /** An IP address, a DNS name (DNS resolution only) or a `unix://` socket path. */
  address: z.string().max(256).optional(),
  /** Service port name → port on this workload. */
  ports: z.record(z.string(), uint32Schema).optional(),
  labels: stringMapSchema.optional(),
  /** Endpoints in the same network reach each other directly; others go through a gateway. */
  network: z.string().optional(),
  /** region/zone/subzone. */
  locality: z.string().optional(),
  /** Load-balancing weight relative to the other endpoints of the service. */
  weight: uint32Schema.optional(),
  serviceAccount: z.string().optional(),
});

export const workloadEntrySchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('WorkloadEntry'),
  metadata: objectMetaSchema,
  spec: workloadEntrySpecSchema,
  status: statusSchema.optional(),
});

export type WorkloadEntrySpec = z.infer<typeof workloadEntrySpecSchema>;
export type WorkloadEntry = z.infer<typeof workloadEntrySchema>;
