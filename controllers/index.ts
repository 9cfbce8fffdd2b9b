// Config sources and the model they fill. Other packages import from here only.
export { newConfigDirSource, type ConfigDirSource, type ConfigDirSourceOptions } from './config-dir-source.js';
export { formatConfigFileProblem, type ConfigFileProblem, type ConfigFileProblemReason } from './config-file-problem.js';
export { isConfigFileName, parseConfigFile, type ParsedConfigFile, type ParsedDocument } from './config-file-parser.js';
export { CLUSTER_SCOPED_KINDS, isClusterScoped } from './cluster-scoped-kinds.js';
export { groupKindOf, groupOf } from './group-kind.js';
export {
  INBOUND_TRAFFIC_MODES,
  OUTBOUND_TRAFFIC_MODES,
  PATH_NORMALIZATIONS,
  extensionProviderSchema,
  meshConfigInputSchema,
  proxyConfigInputSchema,
  type ExtensionProvider,
  type InboundTrafficMode,
  type MeshConfig,
  type MeshConfigInput,
  type OutboundTrafficMode,
  type PathNormalization,
  type ProxyConfig,
  type ProxyConfigInput,
} from './mesh-config-schema.js';
export { DEFAULT_MESH_CONFIG, effectivePathNormalization } from './mesh-config-defaults.js';
export {
  DEFAULT_MESH_CONFIG_FILE,
  MESH_CONFIG_MAP_KEY,
  MESH_CONFIG_MAP_NAME,
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
export { newMeshConfigWatcher, type MeshConfigWatcher, type MeshConfigWatcherOptions } from './mesh-config-watcher.js';
