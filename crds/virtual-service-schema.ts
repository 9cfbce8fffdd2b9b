import { z } from 'zod';
import {
  atMostOneOf,
  durationSchema,
  exportToSchema,
  int32Schema,
  nonNegativeInt32Schema,
  percentSchema,
  portNumberSchema,
  portSelectorSchema,
  requiredString,
  stringMapSchema,
  stringMatchSchema,
} from './common-schemas.js';
import { objectMetaSchema, statusSchema } from './object-meta-schema.js';
import { NETWORKING_API_VERSIONS } from './kinds.js';

/** Base64 as the proto `bytes` type takes it in JSON. */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const REDIRECT_PORT_SELECTIONS = ['FROM_PROTOCOL_DEFAULT', 'FROM_REQUEST_PORT'] as const;
export const UNMATCHED_PREFLIGHTS = ['UNSPECIFIED', 'FORWARD', 'IGNORE'] as const;

/** A service (and optionally subset and port) that traffic is sent to. */
export const destinationSchema = z.strictObject({
  host: requiredString('a destination host such as reviews.default.svc.cluster.local').min(1, {
    error: 'expected a non-empty destination host such as reviews.default.svc.cluster.local',
  }),
  subset: z.string().optional(),
  port: portSelectorSchema.optional(),
});

const headerOperationsSchema = z.strictObject({
  set: stringMapSchema.optional(),
  add: stringMapSchema.optional(),
  remove: z.array(z.string()).optional(),
});

export const headersSchema = z.strictObject({
  request: headerOperationsSchema.optional(),
  response: headerOperationsSchema.optional(),
});

const stringMatchMapSchema = z.record(z.string(), stringMatchSchema);

export const httpMatchRequestSchema = z.strictObject({
  name: z.string().optional(),
  uri: stringMatchSchema.optional(),
  scheme: stringMatchSchema.optional(),
  method: stringMatchSchema.optional(),
  authority: stringMatchSchema.optional(),
  headers: stringMatchMapSchema.optional(),
  port: portNumberSchema.optional(),
  sourceLabels: stringMapSchema.optional(),
  gateways: z.array(z.string()).optional(),
  queryParams: stringMatchMapSchema.optional(),
  ignoreUriCase: z.boolean().optional(),
  withoutHeaders: stringMatchMapSchema.optional(),
  sourceNamespace: z.string().optional(),
  statPrefix: z.string().optional(),
});

export const httpRouteDestinationSchema = z.strictObject({
  destination: destinationSchema,
  /** Relative share of the traffic; with several destinations, one gets weight/(sum of weights). */
  weight: nonNegativeInt32Schema.optional(),
  headers: headersSchema.optional(),
});

export const routeDestinationSchema = z.strictObject({
  destination: destinationSchema,
  weight: nonNegativeInt32Schema.optional(),
});

export const httpRedirectSchema = z
  .strictObject({
    uri: z.string().optional(),
    authority: z.string().optional(),
    port: portNumberSchema.optional(),
    derivePort: z.enum(REDIRECT_PORT_SELECTIONS).optional(),
    /** http or https. */
    scheme: z.string().optional(),
    redirectCode: z.int().min(300).max(399).optional(),
    prefixRewrite: z.string().optional(),
  })
  .refine(...atMostOneOf('port', 'derivePort'));

export const httpDirectResponseSchema = z.strictObject({
  status: z.int().min(200).max(599),
  body: z
    .strictObject({
      string: z.string().optional(),
      bytes: z
        .string()
        .regex(BASE64_PATTERN, { error: (issue) => `expected base64-encoded bytes, got ${JSON.stringify(issue.input)}` })
        .optional(),
    })
    .refine(...atMostOneOf('string', 'bytes'))
    .optional(),
});

export const delegateSchema = z.strictObject({
  name: z.string().optional(),
  namespace: z.string().optional(),
});

export const httpRewriteSchema = z.strictObject({
  uri: z.string().optional(),
  authority: z.string().optional(),
  uriRegexRewrite: z
    .strictObject({
      match: z.string().optional(),
      rewrite: z.string().optional(),
    })
    .optional(),
});

export const httpRetrySchema = z.strictObject({
  attempts: nonNegativeInt32Schema.optional(),
  perTryTimeout: z.optional(durationSchema),
  /** Comma-separated retry conditions (5xx, gateway-error, connect-failure, …) or status codes. */
  retryOn: z.string().optional(),
  retryRemoteLocalities: z.boolean().optional(),
  retryIgnorePreviousHosts: z.boolean().optional(),
  backoff: z.optional(durationSchema),
});

export const corsPolicySchema = z.strictObject({
  /** Deprecated: use allowOrigins. */
  allowOrigin: z.array(z.string()).optional(),
  allowOrigins: z.array(stringMatchSchema).optional(),
  allowMethods: z.array(z.string()).optional(),
  allowHeaders: z.array(z.string()).optional(),
  exposeHeaders: z.array(z.string()).optional(),
  maxAge: z.optional(durationSchema),
  allowCredentials: z.boolean().optional(),
  unmatchedPreflights: z.enum(UNMATCHED_PREFLIGHTS).optional(),
});

export const httpFaultInjectionSchema = z.strictObject({
  delay: z
    .strictObject({
      /** Deprecated: use percentage. */
      percent: int32Schema.optional(),
      fixedDelay: z.optional(durationSchema),
      exponentialDelay: z.optional(durationSchema),
      percentage: percentSchema.optional(),
    })
    .refine(...atMostOneOf('fixedDelay', 'exponentialDelay'))
    .optional(),
  abort: z
    .strictObject({
      httpStatus: z.int().min(200).max(599).optional(),
      grpcStatus: z.string().optional(),
      http2Error: z.string().optional(),
      percentage: percentSchema.optional(),
    })
    .refine(...atMostOneOf('httpStatus', 'grpcStatus', 'http2Error'))
    .optional(),
});

export const httpMirrorPolicySchema = z.strictObject({
  destination: destinationSchema,
  percentage: percentSchema.optional(),
});

export const httpRouteSchema = z.strictObject({
  name: z.string().optional(),
  match: z.array(httpMatchRequestSchema).optional(),
  route: z.array(httpRouteDestinationSchema).optional(),
  redirect: httpRedirectSchema.optional(),
  directResponse: httpDirectResponseSchema.optional(),
  delegate: delegateSchema.optional(),
  rewrite: httpRewriteSchema.optional(),
  timeout: z.optional(durationSchema),
  retries: httpRetrySchema.optional(),
  fault: httpFaultInjectionSchema.optional(),
  mirror: destinationSchema.optional(),
  mirrors: z.array(httpMirrorPolicySchema).optional(),
  /** Deprecated: use mirrorPercentage. */
  mirrorPercent: z.int().min(0).max(100).optional(),
  mirrorPercentage: percentSchema.optional(),
  corsPolicy: corsPolicySchema.optional(),
  headers: headersSchema.optional(),
});

export const tlsMatchAttributesSchema = z.strictObject({
  sniHosts: z.array(z.string()),
  destinationSubnets: z.array(z.string()).optional(),
  port: portNumberSchema.optional(),
  sourceLabels: stringMapSchema.optional(),
  gateways: z.array(z.string()).optional(),
  sourceNamespace: z.string().optional(),
});

export const l4MatchAttributesSchema = z.strictObject({
  destinationSubnets: z.array(z.string()).optional(),
  port: portNumberSchema.optional(),
  sourceSubnet: z.string().optional(),
  sourceLabels: stringMapSchema.optional(),
  gateways: z.array(z.string()).optional(),
  sourceNamespace: z.string().optional(),
});

export const tlsRouteSchema = z.strictObject({
  match: z.array(tlsMatchAttributesSchema),
  route: z.array(routeDestinationSchema).optional(),
});

export const tcpRouteSchema = z.strictObject({
  match: z.array(l4MatchAttributesSchema).optional(),
  route: z.array(routeDestinationSchema).optional(),
});

export const virtualServiceSpecSchema = z.strictObject({
  /** Hosts this routing applies to; empty only in a delegate VirtualService. */
  hosts: z.array(z.string()).optional(),
  /** Gateways (`name` or `namespace/name`) and `mesh` for sidecars; absent means `mesh` only. */
  gateways: z.array(z.string()).optional(),
  http: z.array(httpRouteSchema).optional(),
  tls: z.array(tlsRouteSchema).optional(),
  tcp: z.array(tcpRouteSchema).optional(),
  exportTo: exportToSchema.optional(),
});

export const virtualServiceSchema = z.strictObject({
  apiVersion: z.enum(NETWORKING_API_VERSIONS),
  kind: z.literal('VirtualService'),
  metadata: objectMetaSchema,
  spec: virtualServiceSpecSchema,
  status: statusSchema.optional(),
});

export type Destination = z.infer<typeof destinationSchema>;
export type HttpMatchRequest = z.infer<typeof httpMatchRequestSchema>;
export type HttpRouteDestination = z.infer<typeof httpRouteDestinationSchema>;
export type RouteDestination = z.infer<typeof routeDestinationSchema>;
export type HttpRoute = z.infer<typeof httpRouteSchema>;
export type TlsRoute = z.infer<typeof tlsRouteSchema>;
export type TcpRoute = z.infer<typeof tcpRouteSchema>;
export type VirtualServiceSpec = z.infer<typeof virtualServiceSpecSchema>;
export type VirtualService = z.infer<typeof virtualServiceSchema>;
