// Config sources and the model they fill. Other packages import from here only.
export { newConfigDirSource, type ConfigDirSource, type ConfigDirSourceOptions } from './config-dir-source.js';
export { formatConfigFileProblem, type ConfigFileProblem, type ConfigFileProblemReason } from './config-file-problem.js';
export { isConfigFileName, parseConfigFile, type ParsedConfigFile, type ParsedDocument } from './config-file-parser.js';
export { CLUSTER_SCOPED_KINDS, isClusterScoped } from './cluster-scoped-kinds.js';
export { groupKindOf, groupOf } from './group-kind.js';
export { newMeshConfigWatcher, type MeshConfigWatcher, type MeshConfigWatcherOptions } from './mesh-config-watcher.js';
// The model and the reconcilers that fill it.
export { formatConfigKey, type ConfigKey, type ConfigKind } from './model/config-key.js';
export { PUSH_REASONS, type ConfigUpdater, type PushReason, type PushRequest } from './model/config-updater.js';
export { configContentOf, newConfigStore, type ConfigEntry, type ConfigStore, type ConfigStoreWriter } from './model/config-store.js';
export type {
  ContainerPort,
  Endpoint,
  EndpointSliceInfo,
  NamespaceInfo,
  PortProtocol,
  Service,
  ServicePort,
  Workload,
} from './model/registry-types.js';
export { matchesLabels } from './model/label-selector.js';
export {
  SERVICE_NAME_LABEL,
  SIDECAR_STATUS_ANNOTATION,
  TLS_MODE_LABEL,
  endpointSliceFromObject,
  namespaceFromObject,
  serviceFromObject,
  workloadFromPod,
} from './model/registry-conversion.js';
export { buildPodEndpoints, buildSliceEndpoints, resolveTargetPort, selectsWorkload } from './model/endpoint-builder.js';
export {
  newServiceRegistry,
  type RegistryChange,
  type ServiceRegistry,
  type ServiceRegistryOptions,
  type ServiceRegistryWriter,
} from './model/service-registry.js';
export { newMeshModel, type MeshModel, type MeshModelOptions, type MeshModelWriter } from './model/mesh-model.js';
export { newConfigDirSourceSet, type SourceSet } from './source-set.js';
export { newKubeSourceSet, type KubeSourceSetOptions } from './kube-sources.js';
export { newKubeThrottle, throttledTransport, type KubeThrottle, type KubeThrottleOptions } from './kube-throttle.js';
export { newInitialSyncTracker, type InitialSyncTracker, type TrackedSource } from './initial-sync-tracker.js';
export { newPushEmitter, type PushEmitter } from './push-emitter.js';
export { scopedLogger, type LoggerSource } from './logger-source.js';
export {
  buildConfigStatus,
  describeIssues,
  type ConfigOutcome,
  type ConfigStatusOptions,
  type ConfigStatusPatch,
  type StatusCondition,
  type ValidationMessage,
} from './config-status.js';
export { newConfigStatusController, type ConfigOutcomeSink, type ConfigStatusControllerOptions } from './config-status-controller.js';
export { newConfigReconciler, type ConfigReconcilerOptions } from './config-reconciler.js';
export { newNamespaceReconciler, type RegistryReconcilerOptions } from './namespace-reconciler.js';
export { newServiceReconciler } from './service-reconciler.js';
export { newPodReconciler } from './pod-reconciler.js';
export { newEndpointSliceReconciler } from './endpoint-slice-reconciler.js';
export { newMeshConfigReconciler, type MeshConfigReconcilerOptions } from './mesh-config-reconciler.js';
export { wireController, type ControllerWiring } from './reconciler-wiring.js';
export {
  registerConfigControllers,
  type ConfigControllers,
  type RegisterConfigControllersOptions,
} from './register-config-controllers.js';
export {
  newMeshEnvironment,
  setupConfigWithManager,
  type ConfigSources,
  type ConfigSourcesOptions,
  type MeshEnvironment,
  type MeshEnvironmentOptions,
} from './config-pipeline.js';
export { modelDebugRoutes } from './model-debug-routes.js';
