// The embedded data plane, a program of its own (bin/mesh-dataplane.js), run by the agent where no
// Envoy binary exists: it takes LDS/RDS/CDS/EDS and secrets over SDS as Envoy would, and serves
// traffic with mutual TLS, JWT, RBAC, external authorization (ext_authz) and routing. What it
// decides is in decisions/ (pure, no sockets); this package holds the sockets, the config state
// and the admin server.
export { newDataPlaneProcess, type DataPlaneProcess, type DataPlaneProcessOptions } from './data-plane-process.js';
export { newEmbeddedRunner, APP_ADDRESS_METADATA, OUTBOUND_CAPTURE_PORT, type EmbeddedRunner, type EmbeddedRunnerOptions } from './embedded-runner.js';
export { readBootstrap, BootstrapError, type BootstrapView } from './bootstrap-view.js';
export { newEmbeddedDataPlane, type EmbeddedDataPlane, type EmbeddedDataPlaneOptions } from './embedded-data-plane.js';
export { newConfigState, keyResources, type ConfigState, type ConfigSnapshot, type ApplyResult } from './config-state.js';
export { newXdsSubscriber, type XdsSubscriber, type XdsSubscriberOptions } from './xds-subscriber.js';
export { newSdsSubscriber, type SdsSubscriber, type SecretSet } from './sds-subscriber.js';
export { newAdminServer, type AdminServer } from './admin-server.js';
export { ENVOY_LEVELS, ENVOY_LOGGERS, newEnvoyLoggers, type EnvoyLevel, type EnvoyLoggers } from './admin-loggers.js';
export { sniffProtocol, type SniffResult } from './protocol-sniffer.js';
