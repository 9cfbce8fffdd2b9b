// Config in, model out: the sources (sources/: the config folder, Kubernetes informers, the mesh
// config watcher), one reconciler per kind and their wiring (reconcilers/), the in-memory model
// they fill (model/), the status writer (status/), WorkloadEntry auto-registration and health
// (autoregistration/, fed by the xDS server), and `setupConfigWithManager`, which registers
// the pipeline on a manager. Never imports xds/: pushes leave through a callback. Other packages
// import from here only.
export { newConfigDirSource, type ConfigDirSource, type ConfigDirSourceOptions } from './sources/config-dir-source.js';
export { formatConfigFileProblem, type ConfigFileProblem, type ConfigFileProblemReason } from './sources/config-file-problem.js';
export { isConfigFileName, parseConfigFile, type ParsedConfigFile, type ParsedDocument } from './sources/config-file-parser.js';
export { CLUSTER_SCOPED_KINDS, isClusterScoped } from './sources/cluster-scoped-kinds.js';
export { groupKindOf, groupOf } from './sources/group-kind.js';
export { newMeshConfigWatcher, type MeshConfigWatcher, type MeshConfigWatcherOptions } from './sources/mesh-config-watcher.js';
// The model and the reconcilers that fill it.
export type { ConfigKey, ConfigKind } from './model/config-key.js';
export { PUSH_REASONS, pushRequestOf, type ConfigUpdater, type PushChange, type PushReason, type PushRequest } from './model/config-updater.js';
export { newCredentialStore, type Credential, type CredentialStore, type CredentialStoreWriter } from './model/credential-store.js';
export { parseSecretCredential, type SecretCredentialResult } from './reconcilers/secret-credential.js';
export { newSecretReconciler } from './reconcilers/secret-reconciler.js';
export { configContentOf, newConfigStore, type ConfigEntry, type ConfigStore, type ConfigStoreWriter } from './model/config-store.js';
export type {
  ContainerPort,
  Endpoint,
  EndpointSliceInfo,
  NamespaceInfo,
  PortProtocol,
  Service,
  ServiceEntryAttributes,
  ServiceEntryResolution,
  ServicePort,
  Workload,
} from './model/registry-types.js';
export { endpointSliceFromObject, namespaceFromObject, serviceFromObject, workloadFromPod } from './model/registry-conversion.js';
export { modelFromObjects, type ObjectsModelOptions, type RejectedObject } from './model/model-from-objects.js';
export { buildPodEndpoints, buildSliceEndpoints, resolveTargetPort, selectsWorkload } from './model/endpoint-builder.js';
export {
  newServiceRegistry,
  type RegistryChange,
  type ServiceRegistry,
  type ServiceRegistryOptions,
  type ServiceRegistryWriter,
} from './model/service-registry.js';
export {
  DEFAULT_WORKLOAD_SELECTION,
  newMeshModel,
  type MeshModel,
  type MeshModelOptions,
  type MeshModelWriter,
  type WorkloadSelection,
} from './model/mesh-model.js';
export { newConfigDirSourceSet, type SourceSet } from './sources/source-set.js';
export { newKubeSourceSet, type KubeSourceSetOptions } from './sources/kube-sources.js';
export { newKubeThrottle, throttledTransport, type KubeThrottle, type KubeThrottleOptions } from './sources/kube-throttle.js';
export { newInitialSyncTracker, type InitialSyncTracker, type TrackedSource } from './sources/initial-sync-tracker.js';
export { newPushEmitter, type PushEmitter } from './reconcilers/push-emitter.js';
export { scopedLogger, type LoggerSource } from './logger-source.js';
export {
  buildConfigStatus,
  describeIssues,
  type ConfigOutcome,
  type ConfigStatusOptions,
  type ConfigStatusPatch,
  type StatusCondition,
  type ValidationMessage,
} from './status/config-status.js';
export { newConfigStatusController, type ConfigOutcomeSink, type ConfigStatusControllerOptions } from './status/config-status-controller.js';
export { newConfigReconciler, type ConfigReconcilerOptions } from './reconcilers/config-reconciler.js';
export { newNamespaceReconciler, type RegistryReconcilerOptions } from './reconcilers/namespace-reconciler.js';
export { newServiceReconciler } from './reconcilers/service-reconciler.js';
export { newPodReconciler } from './reconcilers/pod-reconciler.js';
export { newEndpointSliceReconciler } from './reconcilers/endpoint-slice-reconciler.js';
export { newMeshConfigReconciler, type MeshConfigReconcilerOptions } from './reconcilers/mesh-config-reconciler.js';
export { wireController, type ControllerWiring } from './reconcilers/reconciler-wiring.js';
export {
  registerConfigControllers,
  type ConfigAnalysisFeed,
  type ConfigControllers,
  type RegisterConfigControllersOptions,
} from './reconcilers/register-config-controllers.js';
export {
  newMeshEnvironment,
  setupConfigWithManager,
  type ConfigSources,
  type ConfigSourcesOptions,
  type MeshEnvironment,
  type MeshEnvironmentOptions,
} from './config-pipeline.js';
export { modelDebugRoutes } from './model-debug-routes.js';
export { newWorkloadEntries, type WorkloadEntrySetupOptions } from './autoregistration/setup-workload-entries.js';
export {
  newWorkloadEntryController,
  type HealthReport,
  type WorkloadEntryController,
  type WorkloadEntryControllerOptions,
} from './autoregistration/workload-entry-controller.js';
export { newKubeWorkloadEntryClient, type WorkloadEntryClient } from './autoregistration/workload-entry-client.js';
export { autoRegisteredEntryName, isHealthyEntry, type ConnectedWorkload } from './autoregistration/workload-entry-state.js';
