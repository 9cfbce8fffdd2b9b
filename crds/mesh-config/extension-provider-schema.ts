import * as z from 'zod/mini';
import { durationSchema } from '../duration-schemas.js';

/**
 * `extensionProviders[]` of the mesh config: a unique name and exactly one provider section. The
 * external authorizers (`envoyExtAuthzHttp`, `envoyExtAuthzGrpc`) are checked field by field, as
 * the reference validates them; the other kinds (tracing, access logging, metrics) are kept as
 * written for their consumers.
 */

/** The provider sections the reference's MeshConfig defines. */
export const EXTENSION_PROVIDER_KINDS = [
  'envoyExtAuthzHttp',
  'envoyExtAuthzGrpc',
  'zipkin',
  'lightstep',
  'datadog',
  'stackdriver',
  'opencensus',
  'skywalking',
  'opentelemetry',
  'prometheus',
  'envoyFileAccessLog',
  'envoyHttpAls',
  'envoyTcpAls',
  'envoyOtelAls',
  'sds',
] as const;

/**
 * Envoy's `envoy.type.v3.StatusCode` values: `statusOnError` must be one of them, as the
 * reference checks.
 */
const ENVOY_STATUS_CODES: ReadonlySet<number> = new Set([
  100, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411,
  412, 413, 414, 415, 416, 417, 421, 422, 423, 424, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

const portProblem = (issue: { input?: unknown }): string => `expected a port from 1 to 65535, got ${String(issue.input)}`;
const portSchema = z
  .int({ error: (issue) => (issue.input === undefined ? 'required: expected a port from 1 to 65535' : undefined) })
  .check(z.minimum(1, { error: portProblem }), z.maximum(65535, { error: portProblem }));

/** `<namespace>/<host>`, a host name or an IP address, as the reference's `validateExtensionProviderService`. */
const serviceSchema = z
  .string({
    error: (issue) => (issue.input === undefined ? 'required: expected the authorizer\'s service, such as "my-ns/authz.my-ns.svc.cluster.local"' : undefined),
  })
  .check(z.refine(serviceProblemIsNone, { error: (issue) => serviceProblem(issue.input as string) ?? '' }));

const HOST_LABEL = /^(?!-)[a-zA-Z0-9-]{1,63}(?<!-)$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const IPV4 = /^(\d{1,3})(\.\d{1,3}){3}$/;

function serviceProblem(service: string): string | undefined {
  if (service === '') return 'expected a service, got ""';
  const parts = service.split('/');
  if (parts.length > 2) return `expected <namespace>/<host> or a host, got "${service}"`;
  const host = parts.length === 2 ? (parts[1] as string) : service;
  if (parts.length === 2 && !NAMESPACE.test(parts[0] as string)) return `expected a namespace before "/", got "${parts[0] as string}" in "${service}"`;
  const isIp = (IPV4.test(host) && host.split('.').every((octet) => Number(octet) <= 255)) || (host.includes(':') && /^[0-9a-fA-F:.]+$/.test(host));
  const isFqdn = host.length <= 255 && host.split('.').every((label) => HOST_LABEL.test(label));
  return isIp || isFqdn ? undefined : `expected a host name or an IP address, got "${host}" in "${service}"`;
}

function serviceProblemIsNone(service: string): boolean {
  return serviceProblem(service) === undefined;
}

const statusOnErrorSchema = z.string().check(
  z.refine((status) => /^\d+$/.test(status) && ENVOY_STATUS_CODES.has(Number(status)), {
    error: (issue) => `expected an HTTP status code Envoy knows, such as "403" or "503", got ${JSON.stringify(issue.input)}`,
  }),
);

/** Header names to match: `x-*` a prefix, `*-id` a suffix, anything else exact; a lone `*` is refused, as the reference does. */
const headerListSchema = z.array(z.string()).check(
  z.superRefine((headers, context) => {
    headers.forEach((header, index) => {
      if (header === '*' || header === '') {
        context.addIssue({
          code: 'custom',
          path: [index],
          input: header,
          message: `expected a header name, a prefix (x-*) or a suffix (*-id), got ${JSON.stringify(header)}`,
        });
      }
    });
  }),
);

const requestBodySchema = z.strictObject({
  maxRequestBytes: z.optional(z.int().check(z.minimum(1), z.maximum(4294967295))),
  allowPartialMessage: z.optional(z.boolean()),
  packAsBytes: z.optional(z.boolean()),
});

const pathPrefixSchema = z.string().check(
  z.refine((prefix) => prefix.startsWith('/') && !/[\s?#]/.test(prefix), {
    error: (issue) => `expected a path starting with "/" (no spaces, "?" or "#"), got ${JSON.stringify(issue.input)}`,
  }),
);

export const envoyExtAuthzHttpSchema = z.strictObject({
  service: serviceSchema,
  port: portSchema,
  timeout: z.optional(durationSchema),
  pathPrefix: z.optional(pathPrefixSchema),
  failOpen: z.optional(z.boolean()),
  clearRouteCache: z.optional(z.boolean()),
  statusOnError: z.optional(statusOnErrorSchema),
  includeRequestHeadersInCheck: z.optional(headerListSchema),
  /** Deprecated: read only when `includeRequestHeadersInCheck` is empty. */
  includeHeadersInCheck: z.optional(headerListSchema),
  includeAdditionalHeadersInCheck: z.optional(z.record(z.string(), z.string())),
  includeRequestBodyInCheck: z.optional(requestBodySchema),
  headersToUpstreamOnAllow: z.optional(headerListSchema),
  headersToDownstreamOnDeny: z.optional(headerListSchema),
  headersToDownstreamOnAllow: z.optional(headerListSchema),
});

export const envoyExtAuthzGrpcSchema = z.strictObject({
  service: serviceSchema,
  port: portSchema,
  timeout: z.optional(durationSchema),
  failOpen: z.optional(z.boolean()),
  clearRouteCache: z.optional(z.boolean()),
  statusOnError: z.optional(statusOnErrorSchema),
  includeRequestBodyInCheck: z.optional(requestBodySchema),
});

const KNOWN_KINDS: ReadonlySet<string> = new Set(EXTENSION_PROVIDER_KINDS);

/** One provider: its name and exactly one section of a known kind. */
export const extensionProviderSchema = z
  .looseObject({
    name: z.string().check(z.minLength(1, { error: 'expected a non-empty provider name' })),
    envoyExtAuthzHttp: z.optional(envoyExtAuthzHttpSchema),
    envoyExtAuthzGrpc: z.optional(envoyExtAuthzGrpcSchema),
  })
  .check(
    z.superRefine((provider, context) => {
      const sections = Object.keys(provider).filter((key) => key !== 'name');
      for (const key of sections) {
        if (!KNOWN_KINDS.has(key)) {
          context.addIssue({
            code: 'custom',
            path: [key],
            input: provider,
            message: `unknown provider type: expected one of ${EXTENSION_PROVIDER_KINDS.join(', ')}`,
          });
        }
      }
      const known = sections.filter((key) => KNOWN_KINDS.has(key));
      if (known.length === 0 && sections.length === 0) {
        context.addIssue({
          code: 'custom',
          path: [],
          input: provider,
          message: `expected one provider section, such as envoyExtAuthzHttp or envoyExtAuthzGrpc`,
        });
      } else if (known.length > 1) {
        context.addIssue({ code: 'custom', path: [known[1] as string], input: provider, message: `expected one provider section, got ${known.join(' and ')}` });
      }
    }),
  );

/** The providers of one mesh config document: names unique. */
export const extensionProvidersSchema = z.array(extensionProviderSchema).check(
  z.superRefine((providers, context) => {
    const seen = new Set<string>();
    providers.forEach((provider, index) => {
      if (seen.has(provider.name))
        context.addIssue({ code: 'custom', path: [index, 'name'], input: provider.name, message: `duplicate extension provider name "${provider.name}"` });
      seen.add(provider.name);
    });
  }),
);

export type EnvoyExtAuthzHttpProvider = z.infer<typeof envoyExtAuthzHttpSchema>;
export type EnvoyExtAuthzGrpcProvider = z.infer<typeof envoyExtAuthzGrpcSchema>;
export type ExtensionProvider = z.infer<typeof extensionProviderSchema>;
