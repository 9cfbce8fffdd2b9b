import { z } from 'zod';
import { atMostOneOf, nonNegativeInt32Schema, requiredString, stringMapSchema, uint32Schema } from './common-schemas.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { workloadEntrySpecSchema } from './workload-entry-schema.js';

const probePortSchema = uint32Schema;

const httpHeaderSchema = z.strictObject({
  name: z.string().regex(/^[-_A-Za-z0-9]+$/, {
    error: (issue) => `expected a header name of letters, digits, '-' and '_', got ${JSON.stringify(issue.input)}`,
  }),
  value: z.string().optional(),
});

/** The health check a workload's agent runs; exactly one of httpGet, tcpSocket, exec or grpc. */
export const readinessProbeSchema = z
  .strictObject({
    initialDelaySeconds: nonNegativeInt32Schema.optional(),
    timeoutSeconds: nonNegativeInt32Schema.optional(),
    periodSeconds: nonNegativeInt32Schema.optional(),
    successThreshold: nonNegativeInt32Schema.optional(),
    failureThreshold: nonNegativeInt32Schema.optional(),
    httpGet: z
      .strictObject({
        path: z.string().optional(),
        port: probePortSchema,
        host: z.string().optional(),
        scheme: z.string().optional(),
        httpHeaders: z.array(httpHeaderSchema).optional(),
      })
      .optional(),
    tcpSocket: z.strictObject({ host: z.string().optional(), port: probePortSchema }).optional(),
    exec: z.strictObject({ command: z.array(requiredString('a command word').min(1)) }).optional(),
    grpc: z.strictObject({ port: probePortSchema, service: z.string().optional() }).optional(),
  })
  .refine(...atMostOneOf('httpGet', 'tcpSocket', 'exec', 'grpc'));

export const workloadGroupSpecSchema = z.strictObject({
  /** Labels and annotations copied onto every WorkloadEntry made from the group. */
  metadata: z.strictObject({ labels: stringMapSchema.optional(), annotations: stringMapSchema.optional() }).optional(),
  /** The WorkloadEntry fields shared by the group's workloads; address is filled in per workload. */
  template: workloadEntrySpecSchema.optional(),
  probe: readinessProbeSchema.optional(),
});

export const workloadGroupSchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('WorkloadGroup'),
  metadata: objectMetaSchema,
  spec: workloadGroupSpecSchema,
  status: statusSchema.optional(),
});

export type ReadinessProbe = z.infer<typeof readinessProbeSchema>;
export type WorkloadGroupSpec = z.infer<typeof workloadGroupSpecSchema>;
export type WorkloadGroup = z.infer<typeof workloadGroupSchema>;
