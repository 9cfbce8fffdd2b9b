/** A logging scope as a program declares it: registered once, with a one-line description. */
export interface ScopeDescriptor {
  readonly name: string;
  readonly description: string;
}

/** The fallback scope: its level applies to every scope the level specs do not name. */
export const DEFAULT_SCOPE = 'default';

/** Not a scope of its own: `all:<level>` in a level spec (or `all` in `--log_caller`) sets every scope. */
export const ALL_SCOPES = 'all';

const ALL: ScopeDescriptor = { name: ALL_SCOPES, description: 'Pseudo-scope: a setting for it applies to every scope' };
const DEFAULT: ScopeDescriptor = { name: DEFAULT_SCOPE, description: 'Unscoped logging messages' };

/** The `pilot-discovery` scopes, in the seed's order. */
export const DAEMON_SCOPES: readonly ScopeDescriptor[] = Object.freeze([
  { name: 'ads', description: 'Aggregated discovery service: streams, pushes, ACKs and NACKs' },
  { name: 'adsc', description: 'Aggregated discovery client' },
  ALL,
  { name: 'analysis', description: 'Configuration analysis' },
  { name: 'authn', description: 'Authentication policy (peer and request authentication)' },
  { name: 'authorization', description: 'Authorization policy' },
  { name: 'ca', description: 'Certificate authority' },
  DEFAULT,
  { name: 'gateway', description: 'Gateway configuration' },
  { name: 'klog', description: 'Messages of the orchestrator client library' },
  { name: 'orch', description: 'Orchestrator client and informers' },
  { name: 'mcp', description: 'Mesh configuration protocol' },
  { name: 'model', description: 'Service model and push context' },
  { name: 'pkica', description: 'Self-signed and plugged CA key and certificate handling' },
  { name: 'processing', description: 'Configuration processing pipeline' },
  { name: 'resource', description: 'Configuration resources' },
  { name: 'rootcertrotator', description: 'Self-signed root certificate rotation' },
  { name: 'secretcontroller', description: 'Remote cluster secret controller' },
  { name: 'serverca', description: 'Certificate signing service' },
  { name: 'source', description: 'Configuration sources' },
  { name: 'spiffe', description: 'SPIFFE identities and trust bundles' },
  { name: 'status', description: 'Status reporting on configuration resources' },
  { name: 'telemetry', description: 'Telemetry configuration' },
  { name: 'trustBundle', description: 'Workload trust bundle' },
  { name: 'validation', description: 'Configuration validation' },
  { name: 'validationController', description: 'Validation webhook configuration controller' },
  { name: 'validationServer', description: 'Validation webhook server' },
  { name: 'wle', description: 'Workload entry controller' },
]);

/** The `pilot-agent` scopes, in the seed's order. */
export const AGENT_SCOPES: readonly ScopeDescriptor[] = Object.freeze([
  { name: 'ads', description: 'Aggregated discovery service' },
  { name: 'adsc', description: 'Aggregated discovery client' },
  ALL,
  { name: 'authn', description: 'Authentication' },
  { name: 'authorization', description: 'Authorization' },
  { name: 'ca', description: 'Certificate authority client' },
  { name: 'cache', description: 'Workload certificate cache' },
  { name: 'caclient', description: 'Certificate signing request client' },
  DEFAULT,
  { name: 'dns', description: 'DNS proxy' },
  { name: 'cloudcred', description: 'Cloud credential fetcher' },
  { name: 'cloudca', description: 'Cloud certificate authority client' },
  { name: 'healthcheck', description: 'Application health checks' },
  { name: 'klog', description: 'Messages of the orchestrator client library' },
  { name: 'orch', description: 'Orchestrator client' },
  { name: 'mockcred', description: 'Mock credential fetcher' },
  { name: 'model', description: 'Proxy model' },
  { name: 'sds', description: 'Secret discovery service' },
  { name: 'spiffe', description: 'SPIFFE identities and trust bundles' },
  { name: 'stsclient', description: 'Security token service client' },
  { name: 'stsserver', description: 'Security token service server' },
  { name: 'telemetry', description: 'Telemetry' },
  { name: 'token', description: 'Token exchange' },
  { name: 'trustBundle', description: 'Workload trust bundle' },
  { name: 'validation', description: 'Configuration validation' },
  { name: 'validationController', description: 'Validation controller' },
  { name: 'wasm', description: 'WebAssembly module fetching' },
  { name: 'wle', description: 'Workload entry' },
  { name: 'xdsproxy', description: 'xDS proxy between the data plane and the daemon' },
]);
