import type { MeshConfig, PathNormalization } from './mesh-config-schema.js';

/**
 * The mesh config when nothing is configured (the reference defaults with our names). Frozen:
 * merging always builds a new object.
 */
export const DEFAULT_MESH_CONFIG: MeshConfig = deepFreeze({
  proxyListenPort: 15001,
  proxyInboundListenPort: 15006,
  connectTimeout: '10s',
  protocolDetectionTimeout: '0s',
  ingressClass: 'mesh',
  ingressService: 'mesh-ingressgateway',
  ingressControllerMode: 'STRICT',
  ingressSelector: 'ingressgateway',
  enableTracing: true,
  accessLogFile: '',
  accessLogEncoding: 'TEXT',
  defaultConfig: {
    configPath: './etc/mesh/proxy',
    binaryPath: '/usr/local/bin/envoy',
    serviceCluster: 'mesh-proxy',
    drainDuration: '45s',
    terminationDrainDuration: '5s',
    discoveryAddress: 'meshd.mesh-system.svc:15012',
    proxyAdminPort: 15000,
    controlPlaneAuthPolicy: 'MUTUAL_TLS',
    statNameLength: 189,
    statusPort: 15021,
    proxyMetadata: {},
    holdApplicationUntilProxyStarts: false,
  },
  outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
  inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
  enableAutoMtls: true,
  trustDomain: 'cluster.local',
  trustDomainAliases: [],
  defaultServiceExportTo: ['*'],
  defaultVirtualServiceExportTo: ['*'],
  defaultDestinationRuleExportTo: ['*'],
  rootNamespace: 'mesh-system',
  dnsRefreshRate: '60s',
  h2UpgradePolicy: 'DO_NOT_UPGRADE',
  enablePrometheusMerge: true,
  extensionProviders: [
    { name: 'prometheus', prometheus: {} },
    { name: 'envoy', envoyFileAccessLog: { path: '/dev/stdout' } },
  ],
  defaultProviders: { metrics: ['prometheus'] },
  pathNormalization: { normalization: 'DEFAULT' },
});

/** What `pathNormalization` means for the proxy: `DEFAULT` is `BASE` (RFC 3986 normalization). */
export function effectivePathNormalization(config: Pick<MeshConfig, 'pathNormalization'>): Exclude<PathNormalization, 'DEFAULT'> {
  const normalization = config.pathNormalization.normalization;
  return normalization === 'DEFAULT' ? 'BASE' : normalization;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
