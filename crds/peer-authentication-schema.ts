import { z } from 'zod';
import { workloadSelectorSchema } from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { SECURITY_API_VERSIONS } from './kinds.js';

export const MTLS_MODES = ['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT'] as const;

/** UNSET inherits from the parent scope (mesh → namespace → workload → port). */
export const mutualTlsSchema = z.strictObject({
  mode: z.enum(MTLS_MODES).optional(),
});

export const peerAuthenticationSpecSchema = z.strictObject({
  selector: workloadSelectorSchema.optional(),
  mtls: mutualTlsSchema.optional(),
  /** Keyed by container port number (as a string, as in JSON); only ports bound to a service take effect. */
  portLevelMtls: z.record(z.string(), mutualTlsSchema).optional(),
});

export const peerAuthenticationSchema = z.strictObject({
  apiVersion: z.enum(SECURITY_API_VERSIONS),
  kind: z.literal('PeerAuthentication'),
  metadata: objectMetaSchema,
  spec: peerAuthenticationSpecSchema,
  status: statusSchema.optional(),
});

export type MtlsMode = (typeof MTLS_MODES)[number];
export type PeerAuthenticationSpec = z.infer<typeof peerAuthenticationSpecSchema>;
export type PeerAuthentication = z.infer<typeof peerAuthenticationSchema>;
