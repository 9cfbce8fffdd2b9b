import { z } from 'zod';
import { requiredString, stringMapSchema } from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';

export const SERVER_TLS_MODES = ['PASSTHROUGH', 'SIMPLE', 'MUTUAL', 'AUTO_PASSTHROUGH', 'MESH_MUTUAL', 'OPTIONAL_MUTUAL'] as const;
export const TLS_PROTOCOL_VERSIONS = ['TLS_AUTO', 'TLSV1_0', 'TLSV1_1', 'TLSV1_2', 'TLSV1_3'] as const;

const PORT_RANGE_ERROR = (issue: { input?: unknown }) => `expected a port number from 1 to 65535 (0 only with a unix:// bind), got ${String(issue.input)}`;

export const gatewayPortSchema = z.strictObject({
  /** 1–65535; 0 only with a `unix://` bind. */
  number: z.int().min(0, { error: PORT_RANGE_ERROR }).max(65535, { error: PORT_RANGE_ERROR }),
  /** HTTP, HTTPS, GRPC, GRPC-WEB, HTTP2, MONGO, REDIS, MYSQL, TCP or TLS. */
  protocol: requiredString('a protocol such as HTTP, HTTPS, GRPC, HTTP2, TCP or TLS').min(1, {
    error: 'expected a protocol such as HTTP, HTTPS, GRPC, HTTP2, TCP or TLS',
  }),
  name: requiredString('a port name such as http').min(1, { error: 'expected a non-empty port name' }),
  /** Deprecated and ignored on gateways. */
  targetPort: z.uint32().optional(),
});

export const tlsCertificateSchema = z.strictObject({
  serverCertificate: z.string().optional(),
  privateKey: z.string().optional(),
  caCertificates: z.string().optional(),
});

export const serverTlsSettingsSchema = z.strictObject({
  /** On an HTTP server: answer every request with a 301 to https. */
  httpsRedirect: z.boolean().optional(),
  /** Absent means PASSTHROUGH. */
  mode: z.enum(SERVER_TLS_MODES).optional(),
  serverCertificate: z.string().optional(),
  privateKey: z.string().optional(),
  caCertificates: z.string().optional(),
  caCrl: z.string().optional(),
  credentialName: z.string().optional(),
  credentialNames: z.array(z.string()).min(1).max(2).optional(),
  caCertCredentialName: z.string().optional(),
  tlsCertificates: z.array(tlsCertificateSchema).min(1).max(2).optional(),
  subjectAltNames: z.array(z.string()).optional(),
  verifyCertificateSpki: z.array(z.string()).optional(),
  verifyCertificateHash: z.array(z.string()).optional(),
  minProtocolVersion: z.enum(TLS_PROTOCOL_VERSIONS).optional(),
  maxProtocolVersion: z.enum(TLS_PROTOCOL_VERSIONS).optional(),
  cipherSuites: z.array(z.string()).optional(),
  insecureSkipVerify: z.boolean().optional(),
});

export const serverSchema = z.strictObject({
  port: gatewayPortSchema,
  /** An IP address or `unix://` socket path to listen on instead of every address. */
  bind: z.string().optional(),
  /** `host` or `namespace/host`; the namespace part limits which VirtualServices may bind. */
  hosts: z.array(z.string(), {
    error: (issue) =>
      issue.code === 'invalid_type' && issue.input === undefined
        ? 'required: expected at least one host such as "*.example.com" or "namespace/*.example.com"'
        : undefined,
  }),
  tls: serverTlsSettingsSchema.optional(),
  defaultEndpoint: z.string().optional(),
  name: z.string().optional(),
});

export const gatewaySpecSchema = z.strictObject({
  servers: z.array(serverSchema).optional(),
  /** Labels of the gateway workloads (for example `mesh: ingressgateway`). */
  selector: stringMapSchema.optional(),
});

export const gatewaySchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('Gateway'),
  metadata: objectMetaSchema,
  spec: gatewaySpecSchema,
  status: statusSchema.optional(),
});

export type ServerTlsMode = (typeof SERVER_TLS_MODES)[number];
export type ServerTlsSettings = z.infer<typeof serverTlsSettingsSchema>;
export type GatewayServer = z.infer<typeof serverSchema>;
export type GatewaySpec = z.infer<typeof gatewaySpecSchema>;
export type Gateway = z.infer<typeof gatewaySchema>;
