import { z } from 'zod';
import { exportToSchema, portNumberSchema, requiredString, stringMapSchema } from './common-schemas.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { workloadEntrySpecSchema } from './workload-entry-schema.js';

export const SERVICE_ENTRY_LOCATIONS = ['MESH_EXTERNAL', 'MESH_INTERNAL'] as const;
export const SERVICE_ENTRY_RESOLUTIONS = ['NONE', 'STATIC', 'DNS', 'DNS_ROUND_ROBIN'] as const;

export const servicePortSchema = z.strictObject({
  number: portNumberSchema,
  /** HTTP, HTTPS, HTTP2, GRPC, GRPC-WEB, TCP, TLS, UDP, MONGO, REDIS or MYSQL; unset means TCP. */
  protocol: z.string().optional(),
  name: requiredString('a port name such as http'),
  /** The port on the endpoints when it differs from `number`. */
  targetPort: portNumberSchema.optional(),
});

/** The workloads (pods and WorkloadEntries of the entry's namespace) a ServiceEntry's endpoints are: `labels`, as the reference's networking WorkloadSelector (not a policy's `matchLabels`). */
export const serviceEntryWorkloadSelectorSchema = z.strictObject({
  labels: stringMapSchema.optional(),
});

/** Adds a service to the mesh's registry: an external API, or workloads the platform does not know. */
export const serviceEntrySpecSchema = z.strictObject({
  hosts: z.array(z.string(), { error: (issue) => (issue.input === undefined ? 'required: expected at least one host' : undefined) }),
  /** Virtual IPs or CIDR ranges of the service. */
  addresses: z.array(z.string()).optional(),
  ports: z.array(servicePortSchema).optional(),
  location: z.enum(SERVICE_ENTRY_LOCATIONS).optional(),
  resolution: z.enum(SERVICE_ENTRY_RESOLUTIONS).optional(),
  endpoints: z.array(workloadEntrySpecSchema).optional(),
  workloadSelector: serviceEntryWorkloadSelectorSchema.optional(),
  exportTo: exportToSchema.optional(),
  subjectAltNames: z.array(z.string()).optional(),
});

export const serviceEntrySchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('ServiceEntry'),
  metadata: objectMetaSchema,
  spec: serviceEntrySpecSchema,
  status: statusSchema.optional(),
});

export type ServicePort = z.infer<typeof servicePortSchema>;
export type ServiceEntrySpec = z.infer<typeof serviceEntrySpecSchema>;
export type ServiceEntry = z.infer<typeof serviceEntrySchema>;
