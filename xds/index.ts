// The xDS server: ADS state of the world and delta behind one discovery-server front (connection
// registry, request/ACK/NACK handling, push pipeline, generate-encode-send, debug views, metrics
// through callbacks), the push queue and debouncer, the caches of a push (encoding/), stream
// admission and xDS authentication, and `setupXdsWithManager`. The generators are in generators/, the security
// filters in security/, the Envoy plumbing in envoy/ (re-exported here; import envoy/ alone where
// the server is not wanted).
export * from './envoy/index.js';
export { parseProxy, type NodeMessage, type Proxy, type ProxyLocality, type ProxyMetadata, type ProxyType } from './proxy.js';
export {
  mergePushRequests,
  normalizePushRequest,
  pushRequestOf,
  type ConfigKey,
  type ConfigUpdater,
  type PushChange,
  type PushReason,
  type PushRequest,
} from './push/push-request.js';
export type { EncodedResource, GenerateRequest, GenerateResult, Generator, NamedResource } from './generator.js';
export { newWatchState, syncStatus, type SyncStatus, type WatchState, type Watches } from './watch-state.js';
export { decideDelta, decideSotw, type DeltaRequestView, type RequestDecision, type RequestEvent, type SotwRequestView } from './should-respond.js';
export { newDebouncer, type Debouncer, type DebouncerOptions } from './debouncer.js';
export { newPushQueue, type PushQueue } from './push/push-queue.js';
export { startPushWorkers, type PushWorkers } from './push/push-workers.js';
export { newXdsCache, type XdsCache, type XdsCacheMetrics } from './encoding/index.js';
export {
  authenticateStream,
  checkProxyIdentity,
  parseWorkloadIdentity,
  type WorkloadIdentity,
  type XdsAuthContext,
  type XdsAuthenticator,
  type XdsCaller,
} from './xds-auth.js';
export { XdsConnection, type StreamKind, type XdsConnectionOptions } from './xds-connection.js';
export { HeldResources, type HeldResource } from './held-resources.js';
export { DiscoveryServer, type DiscoveryServerOptions, type XdsTuning } from './discovery-server.js';
export type { PushSnapshot, PushStatus } from './push/push-snapshot.js';
export type { DebugSource } from './debug/debug-source.js';
export type { XdsCallbacks } from './xds-callbacks.js';
export { addAdsService, addCsdsService, type XdsAuthPolicy } from './ads-service.js';
export { grpcServerOptions, newGrpcListener, type GrpcListener, type GrpcListenerOptions, type GrpcTransportOptions } from './grpc-listener.js';
export { buildClientConfig, proxySyncStatus, type ProxySyncStatus, type TypeSyncStatus } from './sync-status.js';
export { buildConfigDump, redactSecrets } from './debug/config-dump.js';
export { registerXdsDebugRoutes } from './debug/debug-routes.js';
export { grpcTransportFromSettings, xdsAuthPolicyFromSettings, xdsTuningFromSettings, type KeepaliveFlags } from './xds-settings.js';
export { newXdsServer, type XdsServer, type XdsServerOptions, type XdsTlsMaterial } from './xds-server.js';
export { buildPushContext, type PushContext } from './model/index.js';
export { newMeshGenerators } from './mesh-generators.js';
export { generateProxyConfig } from './offline-proxy-config.js';
export { newInboundSecurityFilters, newJwksResolver } from './security/index.js';
export { setupXdsWithManager, type XdsSetupOptions, type XdsTlsEndpoint } from './setup.js';
