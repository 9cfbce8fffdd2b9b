import { z } from 'zod';
import {
  atMostOneOf,
  durationOrZeroSchema,
  durationSchema,
  exportToSchema,
  int32Schema,
  nonNegativeInt32Schema,
  portNumberSchema,
  portSelectorSchema,
  requiredString,
  stringMapSchema,
  uint32Schema,
  uint64Schema,
  workloadSelectorSchema,
} from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';

export const CLIENT_TLS_MODES = ['DISABLE', 'SIMPLE', 'MUTUAL', 'MESH_MUTUAL'] as const;
export const SIMPLE_LB_POLICIES = ['UNSPECIFIED', 'LEAST_CONN', 'RANDOM', 'PASSTHROUGH', 'ROUND_ROBIN', 'LEAST_REQUEST'] as const;
export const H2_UPGRADE_POLICIES = ['DEFAULT', 'DO_NOT_UPGRADE', 'UPGRADE'] as const;
export const PROXY_PROTOCOL_VERSIONS = ['V1', 'V2'] as const;

/** TLS the client proxy originates toward the destination. */
export const clientTlsSettingsSchema = z.strictObject({
  mode: z.enum(CLIENT_TLS_MODES).optional(),
  clientCertificate: z.string().optional(),
  privateKey: z.string().optional(),
  caCertificates: z.string().optional(),
  /** A secret holding the client key, certificate and CA, instead of file paths. */
  credentialName: z.string().optional(),
  subjectAltNames: z.array(z.string()).optional(),
  sni: z.string().optional(),
  insecureSkipVerify: z.boolean().optional(),
  caCrl: z.string().optional(),
});

const httpCookieSchema = z.strictObject({
  name: requiredString('a cookie name').min(1, { error: 'expected a non-empty cookie name' }),
  path: z.string().optional(),
  ttl: z.optional(durationOrZeroSchema),
  attributes: z
    .array(
      z.strictObject({
        name: z.string().min(1, { error: 'expected a non-empty cookie attribute name' }),
        value: z.string().optional(),
      }),
    )
    .optional(),
});

export const consistentHashSchema = z
  .strictObject({
    httpHeaderName: z.string().optional(),
    httpCookie: httpCookieSchema.optional(),
    useSourceIp: z.boolean().optional(),
    httpQueryParameterName: z.string().optional(),
    ringHash: z.strictObject({ minimumRingSize: uint64Schema.optional() }).optional(),
    maglev: z.strictObject({ tableSize: uint64Schema.optional() }).optional(),
    /** Deprecated: use ringHash.minimumRingSize. */
    minimumRingSize: uint64Schema.optional(),
  })
  .refine(...atMostOneOf('httpHeaderName', 'httpCookie', 'useSourceIp', 'httpQueryParameterName'))
  .refine(...atMostOneOf('ringHash', 'maglev'));

const localityFailoverSchema = z.strictObject({
  from: z.string().optional(),
  to: z.string().optional(),
});

export const localityLbSettingSchema = z.strictObject({
  distribute: z
    .array(
      z.strictObject({
        from: z.string().optional(),
        /** Locality → weight; weights of one entry add up to 100. */
        to: z.record(z.string(), uint32Schema).optional(),
      }),
    )
    .optional(),
  failover: z.array(localityFailoverSchema).optional(),
  failoverPriority: z.array(z.string()).optional(),
  enabled: z.boolean().optional(),
});

export const zoneAwareLbSettingSchema = z.strictObject({
  enabled: z.boolean().optional(),
  failover: z.array(localityFailoverSchema).optional(),
  failoverPriority: z.array(z.string()).optional(),
  minClusterSize: z.int().min(1).optional(),
});

export const warmupSchema = z.strictObject({
  duration: durationSchema,
  minimumPercent: z.number().min(0).max(100).optional(),
  aggression: z.number().min(0).optional(),
});

export const loadBalancerSettingsSchema = z
  .strictObject({
    simple: z.enum(SIMPLE_LB_POLICIES).optional(),
    consistentHash: consistentHashSchema.optional(),
    localityLbSetting: localityLbSettingSchema.optional(),
    zoneAwareLbSetting: zoneAwareLbSettingSchema.optional(),
    warmupDurationSecs: z.optional(durationSchema),
    warmup: warmupSchema.optional(),
  })
  .refine(...atMostOneOf('simple', 'consistentHash'))
  .refine(...atMostOneOf('warmupDurationSecs', 'warmup'))
  .refine(...atMostOneOf('localityLbSetting', 'zoneAwareLbSetting'));

export const connectionPoolSettingsSchema = z.strictObject({
  tcp: z
    .strictObject({
      maxConnections: nonNegativeInt32Schema.optional(),
      connectTimeout: z.optional(durationSchema),
      tcpKeepalive: z
        .strictObject({
          probes: uint32Schema.optional(),
          time: z.optional(durationSchema),
          interval: z.optional(durationSchema),
        })
        .optional(),
      maxConnectionDuration: z.optional(durationSchema),
      /** 0s disables the idle timeout. */
      idleTimeout: z.optional(durationOrZeroSchema),
    })
    .optional(),
  http: z
    .strictObject({
      http1MaxPendingRequests: nonNegativeInt32Schema.optional(),
      http2MaxRequests: nonNegativeInt32Schema.optional(),
      maxRequestsPerConnection: nonNegativeInt32Schema.optional(),
      maxRetries: nonNegativeInt32Schema.optional(),
      idleTimeout: z.optional(durationSchema),
      h2UpgradePolicy: z.enum(H2_UPGRADE_POLICIES).optional(),
      useClientProtocol: z.boolean().optional(),
      maxConcurrentStreams: nonNegativeInt32Schema.optional(),
      http2KeepAlive: z
        .strictObject({
          interval: z.optional(durationSchema),
          timeout: z.optional(durationSchema),
        })
        .optional(),
    })
    .optional(),
});

export const outlierDetectionSchema = z.strictObject({
  /** Deprecated: use consecutiveGatewayErrors or consecutive5xxErrors. */
  consecutiveErrors: int32Schema.optional(),
  splitExternalLocalOriginErrors: z.boolean().optional(),
  consecutiveLocalOriginFailures: uint32Schema.optional(),
  consecutiveGatewayErrors: uint32Schema.optional(),
  consecutive5xxErrors: uint32Schema.optional(),
  interval: z.optional(durationSchema),
  baseEjectionTime: z.optional(durationSchema),
  maxEjectionPercent: z.int().min(0).max(100).optional(),
  minHealthPercent: z.int().min(0).max(100).optional(),
  outlierDetectionHttpErrorCodes: z.array(z.int().min(100).max(599)).optional(),
});

export const tunnelSettingsSchema = z.strictObject({
  /** CONNECT (default) or POST. */
  protocol: z.string().optional(),
  targetHost: requiredString('the host to tunnel to').min(1),
  targetPort: portNumberSchema,
});

export const retryBudgetSchema = z.strictObject({
  percent: z.number().min(0).max(100).optional(),
  minRetryConcurrency: uint32Schema.optional(),
  budgetInterval: z.optional(durationOrZeroSchema),
});

/** Settings for one service port; they override the policy-wide ones for that port. */
export const portTrafficPolicySchema = z.strictObject({
  port: portSelectorSchema.optional(),
  loadBalancer: loadBalancerSettingsSchema.optional(),
  connectionPool: connectionPoolSettingsSchema.optional(),
  outlierDetection: outlierDetectionSchema.optional(),
  tls: clientTlsSettingsSchema.optional(),
});

export const trafficPolicySchema = z.strictObject({
  loadBalancer: loadBalancerSettingsSchema.optional(),
  connectionPool: connectionPoolSettingsSchema.optional(),
  outlierDetection: outlierDetectionSchema.optional(),
  tls: clientTlsSettingsSchema.optional(),
  portLevelSettings: z.array(portTrafficPolicySchema).max(4096).optional(),
  tunnel: tunnelSettingsSchema.optional(),
  proxyProtocol: z.strictObject({ version: z.enum(PROXY_PROTOCOL_VERSIONS).optional() }).optional(),
  retryBudget: retryBudgetSchema.optional(),
});

export const subsetSchema = z.strictObject({
  name: requiredString('a subset name such as v1').min(1, { error: 'expected a non-empty subset name' }),
  labels: stringMapSchema.optional(),
  trafficPolicy: trafficPolicySchema.optional(),
});

export const destinationRuleSpecSchema = z.strictObject({
  host: requiredString('a service host such as reviews.default.svc.cluster.local').min(1, {
    error: 'expected a non-empty service host such as reviews.default.svc.cluster.local',
  }),
  trafficPolicy: trafficPolicySchema.optional(),
  subsets: z.array(subsetSchema).optional(),
  exportTo: exportToSchema.optional(),
  workloadSelector: workloadSelectorSchema.optional(),
});

export const destinationRuleSchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('DestinationRule'),
  metadata: objectMetaSchema,
  spec: destinationRuleSpecSchema,
  status: statusSchema.optional(),
});

export type ClientTlsMode = (typeof CLIENT_TLS_MODES)[number];
export type ClientTlsSettings = z.infer<typeof clientTlsSettingsSchema>;
export type LoadBalancerSettings = z.infer<typeof loadBalancerSettingsSchema>;
export type ConnectionPoolSettings = z.infer<typeof connectionPoolSettingsSchema>;
export type OutlierDetection = z.infer<typeof outlierDetectionSchema>;
export type PortTrafficPolicy = z.infer<typeof portTrafficPolicySchema>;
export type TrafficPolicy = z.infer<typeof trafficPolicySchema>;
export type Subset = z.infer<typeof subsetSchema>;
export type DestinationRuleSpec = z.infer<typeof destinationRuleSpecSchema>;
export type DestinationRule = z.infer<typeof destinationRuleSchema>;
