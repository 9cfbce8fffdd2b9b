// The mesh config (MeshConfig, its ProxyConfig defaults): schema, defaults and loader, read by the
// daemon and the agent. An entry point of its own: the agent reads the mesh config and nothing
// else of the policy API, and importing the package's index would build every kind's schema.
export {
  INBOUND_TRAFFIC_MODES,
  OUTBOUND_TRAFFIC_MODES,
  PATH_NORMALIZATIONS,
  meshConfigInputSchema,
  parseMeshConfigInput,
  parseProxyConfigInput,
  proxyConfigInputSchema,
  type InboundTrafficMode,
  type MeshConfig,
  type MeshConfigInput,
  type OutboundTrafficMode,
  type PathNormalization,
  type ProxyConfig,
  type ProxyConfigInput,
} from './mesh-config-schema.js';
export {
  EXTENSION_PROVIDER_KINDS,
  extensionProviderSchema,
  type EnvoyExtAuthzGrpcProvider,
  type EnvoyExtAuthzHttpProvider,
  type ExtensionProvider,
} from './extension-provider-schema.js';
export { resolveExtAuthzProvider, type ExtAuthzProviderResolution, type ProviderServiceRef, type ResolvedExtAuthzProvider } from './ext-authz-provider.js';
export { DEFAULT_MESH_CONFIG, effectivePathNormalization } from './mesh-config-defaults.js';
export {
  DEFAULT_MESH_CONFIG_FILE,
  MESH_CONFIG_MAP_KEY,
  MeshConfigError,
  applyMeshConfig,
  buildMeshConfig,
  loadMeshConfig,
  meshConfigTextOf,
  parseMeshConfigYaml,
  readMeshConfigFile,
  type LoadMeshConfigOptions,
  type MeshConfigIssue,
} from './mesh-config.js';
