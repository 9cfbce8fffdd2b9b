import * as z from 'zod/mini';
import { en } from 'zod/v4/locales';
import { durationOrZeroSchema, durationSchema } from '../duration-schemas.js';
import { extensionProvidersSchema } from './extension-provider-schema.js';

/**
 * The mesh config as users write it (the `--meshConfig` file, the `mesh` key of the `mesh`
 * ConfigMap): the reference MeshConfig and ProxyConfig field names in camelCase, every field
 * optional. Sections we interpret are strict (an unknown field is an error naming its path);
 * sections we only pass on (tracing, extension providers, locality settings…) are kept as written.
 */

const portSchema = z.int().check(z.minimum(0), z.maximum(65535));
const stringListSchema = z.array(z.string());
const stringMapSchema = z.record(z.string(), z.string());
/** A section kept as written, for the consumers that interpret it. */
const passThroughSchema = z.looseObject({});

export const PATH_NORMALIZATIONS = ['DEFAULT', 'NONE', 'BASE', 'MERGE_SLASHES', 'DECODE_AND_MERGE_SLASHES'] as const;
export type PathNormalization = (typeof PATH_NORMALIZATIONS)[number];

export const OUTBOUND_TRAFFIC_MODES = ['REGISTRY_ONLY', 'ALLOW_ANY'] as const;
export type OutboundTrafficMode = (typeof OUTBOUND_TRAFFIC_MODES)[number];

/** As the reference: inbound traffic goes to the pod IP (`PASSTHROUGH`) or to `LOCALHOST`. */
export const INBOUND_TRAFFIC_MODES = ['PASSTHROUGH', 'LOCALHOST'] as const;
export type InboundTrafficMode = (typeof INBOUND_TRAFFIC_MODES)[number];

const tlsConfigSchema = z.strictObject({
  minProtocolVersion: z.optional(z.enum(['TLS_AUTO', 'TLSV1_2', 'TLSV1_3'])),
  ecdhCurves: z.optional(stringListSchema),
  cipherSuites: z.optional(stringListSchema),
});

export const proxyConfigInputSchema = z.strictObject({
  configPath: z.optional(z.string()),
  binaryPath: z.optional(z.string()),
  serviceCluster: z.optional(z.string()),
  tracingServiceName: z.optional(z.enum(['APP_LABEL_AND_NAMESPACE', 'CANONICAL_NAME_ONLY', 'CANONICAL_NAME_AND_NAMESPACE'])),
  drainDuration: z.optional(durationSchema),
  terminationDrainDuration: z.optional(durationSchema),
  discoveryAddress: z.optional(z.string()),
  statsdUdpAddress: z.optional(z.string()),
  proxyAdminPort: z.optional(portSchema),
  controlPlaneAuthPolicy: z.optional(z.enum(['NONE', 'MUTUAL_TLS'])),
  customConfigFile: z.optional(z.string()),
  statNameLength: z.optional(z.int().check(z.minimum(0))),
  concurrency: z.optional(z.int().check(z.minimum(0))),
  proxyBootstrapTemplatePath: z.optional(z.string()),
  interceptionMode: z.optional(z.enum(['REDIRECT', 'TPROXY', 'NONE'])),
  tracing: z.optional(passThroughSchema),
  envoyAccessLogService: z.optional(passThroughSchema),
  envoyMetricsService: z.optional(passThroughSchema),
  proxyMetadata: z.optional(stringMapSchema),
  runtimeValues: z.optional(stringMapSchema),
  statusPort: z.optional(portSchema),
  extraStatTags: z.optional(stringListSchema),
  gatewayTopology: z.optional(passThroughSchema),
  meshId: z.optional(z.string()),
  readinessProbe: z.optional(passThroughSchema),
  proxyStatsMatcher: z.optional(
    z.strictObject({
      inclusionPrefixes: z.optional(stringListSchema),
      inclusionSuffixes: z.optional(stringListSchema),
      inclusionRegexps: z.optional(stringListSchema),
    }),
  ),
  holdApplicationUntilProxyStarts: z.optional(z.boolean()),
  caCertificatesPem: z.optional(stringListSchema),
  image: z.optional(passThroughSchema),
  privateKeyProvider: z.optional(passThroughSchema),
  proxyHeaders: z.optional(passThroughSchema),
  fileFlushInterval: z.optional(durationSchema),
  fileFlushMinSizeKb: z.optional(z.int().check(z.minimum(0))),
  statsCompression: z.optional(z.boolean()),
  connectionSettings: z.optional(passThroughSchema),
});

export const meshConfigInputSchema = z.strictObject({
  proxyListenPort: z.optional(portSchema),
  proxyInboundListenPort: z.optional(portSchema),
  proxyHttpPort: z.optional(portSchema),
  connectTimeout: z.optional(durationSchema),
  hboneIdleTimeout: z.optional(durationOrZeroSchema),
  protocolDetectionTimeout: z.optional(durationOrZeroSchema),
  tcpKeepalive: z.optional(passThroughSchema),
  ingressClass: z.optional(z.string()),
  ingressService: z.optional(z.string()),
  ingressControllerMode: z.optional(z.enum(['UNSPECIFIED', 'OFF', 'DEFAULT', 'STRICT'])),
  ingressSelector: z.optional(z.string()),
  enableTracing: z.optional(z.boolean()),
  accessLogFile: z.optional(z.string()),
  accessLogFormat: z.optional(z.string()),
  accessLogEncoding: z.optional(z.enum(['TEXT', 'JSON'])),
  enableEnvoyAccessLogService: z.optional(z.boolean()),
  disableEnvoyListenerLog: z.optional(z.boolean()),
  defaultConfig: z.optional(proxyConfigInputSchema),
  outboundTrafficPolicy: z.optional(z.strictObject({ mode: z.optional(z.enum(OUTBOUND_TRAFFIC_MODES)) })),
  inboundTrafficPolicy: z.optional(z.strictObject({ mode: z.optional(z.enum(INBOUND_TRAFFIC_MODES)) })),
  configSources: z.optional(z.array(passThroughSchema)),
  enableAutoMtls: z.optional(z.boolean()),
  trustDomain: z.optional(z.string()),
  trustDomainAliases: z.optional(stringListSchema),
  caCertificates: z.optional(
    z.array(
      z.strictObject({
        pem: z.optional(z.string()),
        spiffeBundleUrl: z.optional(z.string()),
        certSigners: z.optional(stringListSchema),
        trustDomains: z.optional(stringListSchema),
      }),
    ),
  ),
  defaultServiceExportTo: z.optional(stringListSchema),
  defaultVirtualServiceExportTo: z.optional(stringListSchema),
  defaultDestinationRuleExportTo: z.optional(stringListSchema),
  rootNamespace: z.optional(z.string()),
  localityLbSetting: z.optional(passThroughSchema),
  zoneAwareLbSetting: z.optional(passThroughSchema),
  dnsRefreshRate: z.optional(durationSchema),
  h2UpgradePolicy: z.optional(z.enum(['DO_NOT_UPGRADE', 'UPGRADE'])),
  inboundClusterStatName: z.optional(z.string()),
  outboundClusterStatName: z.optional(z.string()),
  serviceSettings: z.optional(z.array(passThroughSchema)),
  serviceScopeConfigs: z.optional(z.array(passThroughSchema)),
  enablePrometheusMerge: z.optional(z.boolean()),
  ca: z.optional(passThroughSchema),
  extensionProviders: z.optional(extensionProvidersSchema),
  defaultProviders: z.optional(
    z.strictObject({
      tracing: z.optional(stringListSchema),
      metrics: z.optional(stringListSchema),
      accessLogging: z.optional(stringListSchema),
    }),
  ),
  discoverySelectors: z.optional(z.array(passThroughSchema)),
  pathNormalization: z.optional(z.strictObject({ normalization: z.optional(z.enum(PATH_NORMALIZATIONS)) })),
  meshMTLS: z.optional(tlsConfigSchema),
  tlsDefaults: z.optional(tlsConfigSchema),
  defaultTrafficPolicy: z.optional(passThroughSchema),
  serviceEntryVisibility: z.optional(passThroughSchema),
});

/**
 * zod's English messages, passed to each parse: zod's tree-shakable API sets no language of its
 * own, and the agent loads nothing else of zod that would.
 */
const IN_ENGLISH = { error: en().localeError };

/** A ProxyConfig as written (PROXY_CONFIG, the `proxy.mesh.io/config` annotation) checked. */
export function parseProxyConfigInput(value: unknown): z.core.util.SafeParseResult<ProxyConfigInput> {
  return proxyConfigInputSchema.safeParse(value, IN_ENGLISH);
}

/** A MeshConfig as written checked. */
export function parseMeshConfigInput(value: unknown): z.core.util.SafeParseResult<MeshConfigInput> {
  return meshConfigInputSchema.safeParse(value, IN_ENGLISH);
}

export type ProxyConfigInput = z.infer<typeof proxyConfigInputSchema>;
export type MeshConfigInput = z.infer<typeof meshConfigInputSchema>;

/** The proxy defaults after merging: the fields every consumer relies on are always set. */
export type ProxyConfig = ProxyConfigInput &
  Required<
    Pick<
      ProxyConfigInput,
      | 'configPath'
      | 'binaryPath'
      | 'serviceCluster'
      | 'drainDuration'
      | 'terminationDrainDuration'
      | 'discoveryAddress'
      | 'proxyAdminPort'
      | 'controlPlaneAuthPolicy'
      | 'statNameLength'
      | 'statusPort'
      | 'proxyMetadata'
      | 'holdApplicationUntilProxyStarts'
    >
  >;

/** The resolved mesh config: defaults, then the shared config, then the standard one. */
export type MeshConfig = Omit<MeshConfigInput, 'defaultConfig' | 'outboundTrafficPolicy' | 'inboundTrafficPolicy' | 'pathNormalization' | 'defaultProviders'> &
  Required<
    Pick<
      MeshConfigInput,
      | 'proxyListenPort'
      | 'proxyInboundListenPort'
      | 'connectTimeout'
      | 'ingressClass'
      | 'ingressService'
      | 'ingressControllerMode'
      | 'ingressSelector'
      | 'enableTracing'
      | 'accessLogFile'
      | 'accessLogEncoding'
      | 'enableAutoMtls'
      | 'trustDomain'
      | 'trustDomainAliases'
      | 'defaultServiceExportTo'
      | 'defaultVirtualServiceExportTo'
      | 'defaultDestinationRuleExportTo'
      | 'rootNamespace'
      | 'dnsRefreshRate'
      | 'h2UpgradePolicy'
      | 'enablePrometheusMerge'
      | 'extensionProviders'
    >
  > & {
    defaultConfig: ProxyConfig;
    outboundTrafficPolicy: { mode: OutboundTrafficMode };
    inboundTrafficPolicy: { mode: InboundTrafficMode };
    pathNormalization: { normalization: PathNormalization };
    defaultProviders: NonNullable<MeshConfigInput['defaultProviders']>;
  };
