import { z } from 'zod';
import { durationOrZeroSchema, durationSchema } from '../common-schemas.js';

/**
 * The mesh config as users write it (the `--meshConfig` file, the `mesh` key of the `mesh`
 * ConfigMap): the reference MeshConfig and ProxyConfig field names in camelCase, every field
 * optional. Sections we interpret are strict (an unknown field is an error naming its path);
 * sections we only pass on (tracing, extension providers, locality settings…) are kept as written.
 */

const portSchema = z.int().min(0).max(65535);
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
  minProtocolVersion: z.enum(['TLS_AUTO', 'TLSV1_2', 'TLSV1_3']).optional(),
  ecdhCurves: stringListSchema.optional(),
  cipherSuites: stringListSchema.optional(),
});

export const proxyConfigInputSchema = z.strictObject({
  configPath: z.string().optional(),
  binaryPath: z.string().optional(),
  serviceCluster: z.string().optional(),
  tracingServiceName: z.enum(['APP_LABEL_AND_NAMESPACE', 'CANONICAL_NAME_ONLY', 'CANONICAL_NAME_AND_NAMESPACE']).optional(),
  drainDuration: durationSchema.optional(),
  terminationDrainDuration: durationSchema.optional(),
  discoveryAddress: z.string().optional(),
  statsdUdpAddress: z.string().optional(),
  proxyAdminPort: portSchema.optional(),
  controlPlaneAuthPolicy: z.enum(['NONE', 'MUTUAL_TLS']).optional(),
  customConfigFile: z.string().optional(),
  statNameLength: z.int().min(0).optional(),
  concurrency: z.int().min(0).optional(),
  proxyBootstrapTemplatePath: z.string().optional(),
  interceptionMode: z.enum(['REDIRECT', 'TPROXY', 'NONE']).optional(),
  tracing: passThroughSchema.optional(),
  envoyAccessLogService: passThroughSchema.optional(),
  envoyMetricsService: passThroughSchema.optional(),
  proxyMetadata: stringMapSchema.optional(),
  runtimeValues: stringMapSchema.optional(),
  statusPort: portSchema.optional(),
  extraStatTags: stringListSchema.optional(),
  gatewayTopology: passThroughSchema.optional(),
  meshId: z.string().optional(),
  readinessProbe: passThroughSchema.optional(),
  proxyStatsMatcher: z
    .strictObject({
      inclusionPrefixes: stringListSchema.optional(),
      inclusionSuffixes: stringListSchema.optional(),
      inclusionRegexps: stringListSchema.optional(),
    })
    .optional(),
  holdApplicationUntilProxyStarts: z.boolean().optional(),
  caCertificatesPem: stringListSchema.optional(),
  image: passThroughSchema.optional(),
  privateKeyProvider: passThroughSchema.optional(),
  proxyHeaders: passThroughSchema.optional(),
  fileFlushInterval: durationSchema.optional(),
  fileFlushMinSizeKb: z.int().min(0).optional(),
  statsCompression: z.boolean().optional(),
  connectionSettings: passThroughSchema.optional(),
});

/** An extension provider: a unique `name` and one provider section, kept as written. */
export const extensionProviderSchema = z.looseObject({ name: z.string().min(1) });

export const meshConfigInputSchema = z.strictObject({
  proxyListenPort: portSchema.optional(),
  proxyInboundListenPort: portSchema.optional(),
  proxyHttpPort: portSchema.optional(),
  connectTimeout: durationSchema.optional(),
  hboneIdleTimeout: durationOrZeroSchema.optional(),
  protocolDetectionTimeout: durationOrZeroSchema.optional(),
  tcpKeepalive: passThroughSchema.optional(),
  ingressClass: z.string().optional(),
  ingressService: z.string().optional(),
  ingressControllerMode: z.enum(['UNSPECIFIED', 'OFF', 'DEFAULT', 'STRICT']).optional(),
  ingressSelector: z.string().optional(),
  enableTracing: z.boolean().optional(),
  accessLogFile: z.string().optional(),
  accessLogFormat: z.string().optional(),
  accessLogEncoding: z.enum(['TEXT', 'JSON']).optional(),
  enableEnvoyAccessLogService: z.boolean().optional(),
  disableEnvoyListenerLog: z.boolean().optional(),
  defaultConfig: proxyConfigInputSchema.optional(),
  outboundTrafficPolicy: z.strictObject({ mode: z.enum(OUTBOUND_TRAFFIC_MODES).optional() }).optional(),
  inboundTrafficPolicy: z.strictObject({ mode: z.enum(INBOUND_TRAFFIC_MODES).optional() }).optional(),
  configSources: z.array(passThroughSchema).optional(),
  enableAutoMtls: z.boolean().optional(),
  trustDomain: z.string().optional(),
  trustDomainAliases: stringListSchema.optional(),
  caCertificates: z
    .array(
      z.strictObject({
        pem: z.string().optional(),
        spiffeBundleUrl: z.string().optional(),
        certSigners: stringListSchema.optional(),
        trustDomains: stringListSchema.optional(),
      }),
    )
    .optional(),
  defaultServiceExportTo: stringListSchema.optional(),
  defaultVirtualServiceExportTo: stringListSchema.optional(),
  defaultDestinationRuleExportTo: stringListSchema.optional(),
  rootNamespace: z.string().optional(),
  localityLbSetting: passThroughSchema.optional(),
  zoneAwareLbSetting: passThroughSchema.optional(),
  dnsRefreshRate: durationSchema.optional(),
  h2UpgradePolicy: z.enum(['DO_NOT_UPGRADE', 'UPGRADE']).optional(),
  inboundClusterStatName: z.string().optional(),
  outboundClusterStatName: z.string().optional(),
  serviceSettings: z.array(passThroughSchema).optional(),
  serviceScopeConfigs: z.array(passThroughSchema).optional(),
  enablePrometheusMerge: z.boolean().optional(),
  ca: passThroughSchema.optional(),
  extensionProviders: z.array(extensionProviderSchema).optional(),
  defaultProviders: z
    .strictObject({
      tracing: stringListSchema.optional(),
      metrics: stringListSchema.optional(),
      accessLogging: stringListSchema.optional(),
    })
    .optional(),
  discoverySelectors: z.array(passThroughSchema).optional(),
  pathNormalization: z.strictObject({ normalization: z.enum(PATH_NORMALIZATIONS).optional() }).optional(),
  meshMTLS: tlsConfigSchema.optional(),
  tlsDefaults: tlsConfigSchema.optional(),
  defaultTrafficPolicy: passThroughSchema.optional(),
  serviceEntryVisibility: passThroughSchema.optional(),
});

export type ProxyConfigInput = z.infer<typeof proxyConfigInputSchema>;
export type MeshConfigInput = z.infer<typeof meshConfigInputSchema>;
export type ExtensionProvider = z.infer<typeof extensionProviderSchema>;

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
export type MeshConfig = Omit<
  MeshConfigInput,
  'defaultConfig' | 'outboundTrafficPolicy' | 'inboundTrafficPolicy' | 'pathNormalization' | 'defaultProviders'
> &
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
