import { parseCidrList } from './cidr-list.js';
import { formatDuration, parseDuration } from './duration.js';
import { MeshError, UsageError } from './errors.js';
import type { Program, SettingInfo, SettingType } from './settings-info.js';

/**
 * The one registry of environment settings: every setting of the seeds' tables with its exact
 * name, type, default and meaning. Settings are parsed once at start-up by `loadSettings`, which
 * the CLI hands the process environment; everything else receives the frozen result.
 */

/** One row of a settings table. Defaults are written as the seed writes them (`100ms`, `true`, empty). */
export interface SettingSpec {
  readonly type: SettingType;
  readonly default: string;
  readonly meaning: string;
  /** Inclusive bounds, in the setting's unit (milliseconds for durations). */
  readonly min?: number;
  readonly max?: number;
  /** Allowed values of a String setting besides an empty (unset) value. */
  readonly oneOf?: readonly string[];
  /** What a valid value looks like, when the type and bounds do not say it well enough. */
  readonly expected?: string;
  /** A String setting with a structure checked at start-up: `cidr-list` is comma-separated CIDR ranges. */
  readonly syntax?: 'cidr-list';
  /**
   * Set for a setting the seed's tables do not list: `reference` is one the reference daemon
   * reads under the same name and meaning (the seed comparison leaves these out).
   */
  readonly source?: 'reference';
}

/** The tables of the seeds: shared, daemon only, agent only, and the utility's own. */
export type SettingTable = 'shared' | 'daemon' | 'agent' | 'meshctl';

const POSITIVE = { min: 1 } as const;
const NON_NEGATIVE = { min: 0 } as const;
const PORT = { min: 1, max: 65535, expected: 'a port number from 1 to 65535' } as const;
const CIDR_LIST = 'comma-separated CIDR ranges such as 10.0.0.0/8,fd00::/8';

// One setting per line, as the seed's tables read: the formatter leaves the tables alone.
// prettier-ignore
export const SETTING_TABLES = {
  shared: {
    CLUSTER_ID: { type: 'String', default: 'Kubernetes', meaning: 'Cluster and registry this daemon belongs to' },
    ENABLE_CA_SERVER: { type: 'Boolean', default: 'true', meaning: 'false means no CA server is created in the daemon' },
    ENABLE_DEBUG_ON_HTTP: { type: 'Boolean', default: 'true', meaning: 'false disables debug interface on HTTP (recommended in production)' },
    ENABLE_LEGACY_FSGROUP_INJECTION: { type: 'Boolean', default: 'true', meaning: 'Daemon sets pod fsGroup to 1337 on injection (needed for orchestrator 1.18 and older unless JWT_POLICY is `first-party-jwt`)' },
    ENABLE_MULTICLUSTER_HEADLESS: { type: 'Boolean', default: 'false', meaning: 'Headless service DNS resolves to same-network endpoints in any cluster' },
    ENABLE_WASM_TELEMETRY: { type: 'Boolean', default: 'false', meaning: 'Wasm-based telemetry' },
    EXTERNAL_MESHD: { type: 'Boolean', default: 'false', meaning: 'One daemon controls remote clusters including CA' },
    CLOUD_METADATA: { type: 'String', default: '', meaning: 'Pipe-separated `PROJECT_ID`, `PROJECT_NUMBER`, `CLUSTER_NAME`, `CLUSTER_ZONE`' },
    INJECTION_WEBHOOK_CONFIG_NAME: { type: 'String', default: 'mesh-sidecar-injector', meaning: 'Mutating webhook configuration to patch when the utility is not used' },
    MESHD_CUSTOM_HOST: { type: 'String', default: '', meaning: 'Custom daemon host name the daemon signs into its server cert' },
    MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION: { type: 'Boolean', default: 'true', meaning: 'Agent intercepts ECDS updates, downloads the Wasm module and replaces the remote load with the local file' },
    MESH_BOOTSTRAP: { type: 'String', default: '', meaning: 'Path of a proxy bootstrap file that replaces the generated one (not described by the seed)' },
    MESH_DEFAULT_REQUEST_TIMEOUT: { type: 'Duration', default: '0s', meaning: 'Default HTTP and gRPC request timeout' },
    MESH_DELTA_XDS: { type: 'Boolean', default: 'false', meaning: 'Send only delta config instead of full state' },
    MESH_GATEWAY_STRIP_HOST_PORT: { type: 'Boolean', default: 'false', meaning: 'Gateway strips port from host/authority header before filters and routing' },
    MESH_GPRC_MAXRECVMSGSIZE: { type: 'Integer', default: '4194304', meaning: 'Max receive buffer of a gRPC stream, bytes', ...POSITIVE },
    MESH_GPRC_MAXSTREAMS: { type: 'Integer', default: '100000', meaning: 'Max concurrent gRPC streams', ...POSITIVE },
    MESH_MULTIROOT_MESH: { type: 'Boolean', default: 'false', meaning: 'Accept certificates signed by more than one trust anchor for `MESH_MUTUAL`' },
    MESH_METRICS_ANNOTATIONS: { type: 'String', default: '', meaning: 'Metrics annotations (not described by the seed)' },
    JWT_POLICY: { type: 'String', default: 'third-party-jwt', meaning: 'JWT validation policy', oneOf: ['third-party-jwt', 'first-party-jwt'] },
    ORCH_INGRESS_NS: { type: 'String', default: '', meaning: 'Namespace of the orchestrator ingress controller (not described by the seed)' },
    K_REVISION: { type: 'String', default: '', meaning: 'Serverless-platform revision, set when running there' },
    POD_NAME: { type: 'String', default: '', meaning: 'Name of the pod this process runs in, set in-cluster' },
    REQUIRE_3P_TOKEN: { type: 'Boolean', default: 'false', meaning: 'true rejects default orchestrator tokens that lack an audience' },
    REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: { type: 'Boolean', default: 'false', meaning: 'true sends readiness probes to `localhost`; false sends them to the pod IP' },
    SHARED_MESH_CONFIG: { type: 'String', default: '', meaning: 'Extra config map for shared mesh config; standard mesh config takes precedence' },
    SPIFFE_BUNDLE_ENDPOINTS: { type: 'String', default: '', meaning: 'Trust-domain to SPIFFE bundle endpoint map, used to verify client certs of that domain. Tuples separated by `||`, trust domain and endpoint separated by `|`' },
    TOKEN_AUDIENCES: { type: 'String', default: 'mesh-ca', meaning: 'Comma-separated audiences; a token matching any is accepted before certificate issuance' },
    UNSAFE_ENABLE_ADMIN_ENDPOINTS: { type: 'Boolean', default: 'false', meaning: 'Exposes dangerous admin endpoints on the debug interface' },
    UNSAFE_PILOT_ENABLE_RUNTIME_ASSERTIONS: { type: 'Boolean', default: 'false', meaning: 'Expensive panicking runtime asserts; for testing only' },
    XDS_AUTH: { type: 'Boolean', default: 'true', meaning: 'Authenticate xDS clients' },
    XDS_AUTH_PLAINTEXT: { type: 'Boolean', default: 'false', meaning: 'Authenticate plain-text requests (daemon behind a TLS-terminating gateway)' },
    PILOT_CERT_PROVIDER: { type: 'String', default: 'meshd', meaning: 'Provider of the daemon DNS certificate' },
    PILOT_DEBOUNCE_AFTER: { type: 'Duration', default: '100ms', meaning: 'Delay added to config/registry events before a push; extended while events keep arriving, up to PILOT_DEBOUNCE_MAX', ...NON_NEGATIVE },
    PILOT_DEBOUNCE_MAX: { type: 'Duration', default: '10s', meaning: 'Max debounce wait', ...NON_NEGATIVE },
    PILOT_DISTRIBUTION_HISTORY_RETENTION: { type: 'Duration', default: '1m0s', meaning: 'How long old distributed config versions are tracked' },
    PILOT_ENABLED_SERVICE_APIS: { type: 'Boolean', default: 'true', meaning: 'Gateway API support (its CRDs must be installed)' },
    PILOT_ENABLE_ANALYSIS: { type: 'Boolean', default: 'false', meaning: 'Run analyzers, write errors to resource Status' },
    PILOT_ENABLE_CONFIG_DISTRIBUTION_TRACKING: { type: 'Boolean', default: 'true', meaning: 'Meaningful nonces per config message; debug interface shows which proxy has which config' },
    PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY: { type: 'Boolean', default: 'false', meaning: 'Read WorkloadEntry from other clusters' },
    PILOT_ENABLE_DESTINATION_RULE_INHERITANCE: { type: 'Boolean', default: 'false', meaning: 'Workload DestinationRules inherit mesh and namespace level settings' },
    PILOT_ENABLE_EDS_DEBOUNCE: { type: 'Boolean', default: 'true', meaning: 'Include EDS pushes in debouncing' },
    PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES: { type: 'Boolean', default: 'false', meaning: 'Send headless-service endpoints over EDS' },
    PILOT_ENABLE_FLOW_CONTROL: { type: 'Boolean', default: 'false', meaning: 'Wait for a receive to complete before a push' },
    PILOT_ENABLE_HEADLESS_SERVICE_POD_LISTENERS: { type: 'Boolean', default: 'true', meaning: 'Outbound listener per pod of a headless service (disable for large pod counts)' },
    PILOT_ENABLE_INBOUND_PASSTHROUGH: { type: 'Boolean', default: 'true', meaning: 'Inbound clusters are ORIGINAL_DST; false sends to localhost. Overridable by Sidecar.Ingress.DefaultEndpoint' },
    PILOT_ENABLE_MESH_TAGS: { type: 'Boolean', default: 'true', meaning: 'Trace spans carry mesh-specific tags' },
    PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES: { type: 'Boolean', default: 'true', meaning: 'Services with selectors select workload entries with matching labels' },
    PILOT_ENABLE_LEGACY_AUTO_PASSTHROUGH: { type: 'Boolean', default: 'false', meaning: 'Allow any upstream cluster with AUTO_PASSTHROUGH; insecure; will be removed' },
    PILOT_ENABLE_MCS_SERVICEEXPORT: { type: 'Boolean', default: 'false', meaning: 'Generate ServiceExport objects for non cluster-local services' },
    PILOT_ENABLE_MONGO_FILTER: { type: 'Boolean', default: 'true', meaning: 'Inject `envoy.filters.network.mongo_proxy` filter' },
    PILOT_ENABLE_MYSQL_FILTER: { type: 'Boolean', default: 'false', meaning: 'Inject `envoy.filters.network.mysql_proxy` filter' },
    PILOT_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND: { type: 'Boolean', default: 'true', meaning: 'Sniff protocol on inbound listeners with unspecified or unsupported port protocol' },
    PILOT_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND: { type: 'Boolean', default: 'true', meaning: 'Same for outbound listeners' },
    PILOT_ENABLE_REDIS_FILTER: { type: 'Boolean', default: 'false', meaning: 'Inject `envoy.filters.network.redis_proxy` filter' },
    PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION: { type: 'Boolean', default: 'true', meaning: 'Merge virtual hosts with identical routes' },
    PILOT_ENABLE_SERVICEENTRY_SELECT_PODS: { type: 'Boolean', default: 'true', meaning: 'Service entries with selectors select pods' },
    PILOT_ENABLE_STATUS: { type: 'Boolean', default: 'false', meaning: 'Update CRD Status with reconciliation status' },
    PILOT_ENABLE_VIRTUAL_SERVICE_DELEGATE: { type: 'Boolean', default: 'true', meaning: 'false disables VirtualService delegate' },
    PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION: { type: 'Boolean', default: 'true', meaning: 'Auto-register WorkloadEntries from WorkloadGroups on xDS connection' },
    PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS: { type: 'Boolean', default: 'true', meaning: 'Health-check WorkloadEntries from WorkloadGroup config' },
    PILOT_ENABLE_XDS_CACHE: { type: 'Boolean', default: 'true', meaning: 'Cache xDS responses' },
    PILOT_ENABLE_XDS_IDENTITY_CHECK: { type: 'Boolean', default: 'true', meaning: 'Authorize xDS clients to act only as namespaces they may' },
    PILOT_ENDPOINT_TELEMETRY_LABEL: { type: 'Boolean', default: 'true', meaning: 'Add telemetry metadata to Endpoint resources' },
    PILOT_PROXY_FILTER_STATS: { type: 'Boolean', default: 'false', meaning: 'Collect metrics for proxy filter operations' },
    PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: { type: 'Boolean', default: 'false', meaning: 'Send gateways only the clusters their virtual services reference (not described by the seed)' },
    PILOT_FLOW_CONTROL_TIMEOUT: { type: 'Duration', default: '15s', meaning: 'Max push delay; needs PILOT_ENABLE_FLOW_CONTROL' },
    PILOT_HTTP10: { type: 'Boolean', default: 'false', meaning: 'HTTP 1.0 in outbound HTTP listeners' },
    PILOT_HTTP_DELAYED_CLOSE_TIMEOUT: { type: 'Duration', default: '1s', meaning: 'Delayed close for downstream HTTP connections; 0s disables' },
    PILOT_INBOUND_PROTOCOL_DETECTION_TIMEOUT: { type: 'Duration', default: '1s', meaning: 'Inbound protocol detection timeout' },
    PILOT_JWT_ENABLE_REMOTE_JWKS: { type: 'Boolean', default: 'false', meaning: 'If `jwksUri` is a mesh cluster URL, the proxy fetches the key set instead of the daemon' },
    PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: { type: 'Duration', default: '20m0s', meaning: 'Daemon refetch interval of the key set', ...NON_NEGATIVE },
    PILOT_PUSH_THROTTLE: { type: 'Integer', default: '100', meaning: 'Max concurrent pushes', ...POSITIVE },
    PILOT_REMOTE_CLUSTER_TIMEOUT: { type: 'Duration', default: '30s', meaning: 'After it, daemon can be ready without syncing remote-secret clusters; 0 disables' },
    PILOT_SCOPE_GATEWAY_TO_NAMESPACE: { type: 'Boolean', default: 'false', meaning: 'Gateway workload selects only same-namespace Gateways' },
    PILOT_SIDECAR_USE_REMOTE_ADDRESS: { type: 'Boolean', default: 'false', meaning: 'useRemoteAddress on sidecar outbound listeners' },
    PILOT_SKIP_VALIDATE_TRUST_DOMAIN: { type: 'Boolean', default: 'false', meaning: 'Skip same-trust-domain check when mutual TLS is enabled' },
    PILOT_STATUS_BURST: { type: 'Integer', default: '500', meaning: 'Burst of status updates', ...POSITIVE },
    PILOT_STATUS_MAX_WORKERS: { type: 'Integer', default: '100', meaning: 'Max status workers', ...POSITIVE },
    PILOT_STATUS_QPS: { type: 'Float', default: '100', meaning: 'QPS of status updates' },
    PILOT_TRACE_SAMPLING: { type: 'Float', default: '1', meaning: 'Mesh-wide trace sampling percent, 0.0 to 100.0, precision 0.01', min: 0, max: 100 },
    PILOT_USE_ENDPOINT_SLICE: { type: 'Boolean', default: 'false', meaning: 'Use EndpointSlices instead of Endpoints (mutually exclusive)' },
    PILOT_USE_TARGET_PORT_FOR_GATEWAY_ROUTES: { type: 'Boolean', default: 'true', meaning: 'Route names use the gateway service target port' },
    PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: { type: 'Duration', default: '10s', meaning: 'Disconnect time before an auto-registered WorkloadEntry is cleaned up' },
    PILOT_XDS_CACHE_SIZE: { type: 'Integer', default: '20000', meaning: 'Max xDS cache entries', ...POSITIVE },
    PILOT_XDS_CACHE_STATS: { type: 'Boolean', default: 'false', meaning: 'Collect cache efficiency metrics' },
    PILOT_XDS_SEND_TIMEOUT: { type: 'Duration', default: '0s', meaning: 'Send timeout; after it the push is discarded' },
  },
  daemon: {
    AUDIENCE: { type: 'String', default: '', meaning: 'Expected audience in tokens' },
    CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: { type: 'Boolean', default: 'true', meaning: 'Jitter (below the check interval) before starting root cert rotator' },
    CASERVER_SELF_SIGNED_CA_CERT_TTL: { type: 'Duration', default: '87600h0m0s', meaning: 'TTL of self-signed CA root' },
    CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE: { type: 'Integer', default: '2048', meaning: 'RSA key size of self-signed CA', ...POSITIVE },
    CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: { type: 'Duration', default: '1h0m0s', meaning: 'Root expiry check and rotation interval; zero or negative disables; suggested above 10 minutes' },
    CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: { type: 'Integer', default: '20', meaning: 'Grace period percentile', min: 0, max: 100 },
    DEFAULT_WORKLOAD_CERT_TTL: { type: 'Duration', default: '24h0m0s', meaning: 'Used when a CSR sets a non-positive TTL', ...NON_NEGATIVE },
    MAX_WORKLOAD_CERT_TTL: { type: 'Duration', default: '2160h0m0s', meaning: 'Max TTL of issued workload certs', ...NON_NEGATIVE },
    EXTERNAL_CA: { type: 'String', default: '', meaning: 'External CA type: `MESHD_RA_ORCH_API` or `MESHD_RA_MESH_API`', oneOf: ['MESHD_RA_ORCH_API', 'MESHD_RA_MESH_API'] },
    INJECT_ENABLED: { type: 'Boolean', default: 'true', meaning: 'Mutating webhook handler' },
    JWT_RULE: { type: 'String', default: '', meaning: 'JWT rule for daemon authentication' },
    ORCH_SIGNER: { type: 'String', default: '', meaning: 'Orchestrator CA signer type (orchestrator 1.18 and newer)' },
    ORCH_SERVICE_HOST: { type: 'String', default: '', meaning: 'Orchestrator service host, set in-cluster' },
    POD_NAMESPACE: { type: 'String', default: 'mesh-system', meaning: 'Namespace the daemon runs in; default of --namespace' },
    REVISION: { type: 'String', default: '', meaning: 'Control-plane revision this daemon serves' },
    ROOT_CA_DIR: { type: 'String', default: './etc/cacerts', meaning: 'Local or mounted CA root' },
    TOKEN_ISSUER: { type: 'String', default: '', meaning: 'OIDC token issuer used to check tokens' },
    USE_REMOTE_CERTS: { type: 'Boolean', default: 'false', meaning: 'Load CA certs from a remote cluster (external daemon)' },
    // The reference daemon's, not in the seed (source: 'reference').
    BLOCKED_CIDRS_IN_JWKS_URIS: { type: 'String', default: '', meaning: 'Comma-separated CIDR ranges blocked in JWKS URIs (e.g. 10.0.0.0/8,192.168.1.0/24): a `jwksUri` or issuer whose host resolves to an address inside one is not fetched', expected: CIDR_LIST, syntax: 'cidr-list', source: 'reference' },
  },
  agent: {
    BOOTSTRAP_XDS_AGENT: { type: 'Boolean', default: 'false', meaning: 'Fetch bootstrap config before starting the proxy' },
    CA_ADDR: { type: 'String', default: '', meaning: 'Certificate provider address; defaults to discovery address' },
    CA_PROVIDER: { type: 'String', default: 'MeshCA', meaning: 'Authentication provider name' },
    CA_ROOT_CA: { type: 'String', default: '', meaning: 'Explicit root CA for CA connection' },
    CREDENTIAL_FETCHER_TYPE: { type: 'String', default: '', meaning: 'Credential fetcher type; a cloud VM fetcher is supported' },
    CREDENTIAL_IDENTITY_PROVIDER: { type: 'String', default: 'GoogleComputeEngine', meaning: 'Identity provider for credentials' },
    ECC_SIGNATURE_ALGORITHM: { type: 'String', default: '', meaning: 'ECC algorithm for generated private keys' },
    PROXY_METRICS_PORT: { type: 'Integer', default: '15090', meaning: 'Proxy metrics redirection port', ...PORT },
    PROXY_STATUS_PORT: { type: 'Integer', default: '15021', meaning: 'Proxy health status port', ...PORT },
    PROXY_USER: { type: 'String', default: 'mesh-proxy', meaning: 'Proxy user name' },
    FILE_MOUNTED_CERTS: { type: 'Boolean', default: 'false', meaning: 'Workload certificates come from mounted files instead of the CA (not described by the seed)' },
    CLOUD_CLUSTER_URL: { type: 'String', default: '', meaning: 'URL of the cloud cluster' },
    INSTANCE_IP: { type: 'String', default: '', meaning: 'IP address of the pod or instance the agent runs in' },
    MESH_BOOTSTRAP_OVERRIDE: { type: 'String', default: '', meaning: 'File merged over the generated proxy bootstrap (not described by the seed)' },
    MESH_ORCH_APP_PROBERS: { type: 'String', default: '', meaning: 'Application probes the agent serves on the status port, set by injection (not described by the seed)' },
    MESH_META_CLUSTER_ID: { type: 'String', default: '', meaning: 'Cluster ID sent in the proxy node metadata (not described by the seed)' },
    MESH_META_DNS_CAPTURE: { type: 'Boolean', default: 'false', meaning: 'Capture outgoing DNS on port 53, redirect to agent on :15053' },
    ORCH_SERVICE_HOST: { type: 'String', default: '', meaning: 'Set in-cluster' },
    OUTPUT_CERTS: { type: 'String', default: '', meaning: 'Directory to save key and cert; empty means not saved; required for VMs with provisioned certs' },
    PKCS8_KEY: { type: 'Boolean', default: 'false', meaning: 'Generate PKCS#8 private keys' },
    POD_NAMESPACE: { type: 'String', default: '', meaning: 'Namespace of the pod the agent runs in' },
    PROV_CERT: { type: 'String', default: '', meaning: 'Directory of provisioned certs (VMs)' },
    PROXY_CONFIG: { type: 'String', default: '', meaning: 'Proxy configuration; set by injection, gateways use file mounts' },
    PROXY_CONFIG_XDS_AGENT: { type: 'Boolean', default: 'false', meaning: 'Get dynamic proxy-config updates over xDS' },
    PROXY_XDS_DEBUG_VIA_AGENT: { type: 'Boolean', default: 'true', meaning: 'Agent listens on 15004 and offers the daemon debug API' },
    PROXY_XDS_VIA_AGENT: { type: 'Boolean', default: 'true', meaning: 'Proxy sends xDS via the agent' },
    SECRET_GRACE_PERIOD_RATIO: { type: 'Float', default: '0.5', meaning: 'Cert rotation grace ratio', min: 0, max: 1 },
    SECRET_TTL: { type: 'Duration', default: '24h0m0s', meaning: 'Cert lifetime requested by the agent', ...NON_NEGATIVE },
    SERVICE_ACCOUNT: { type: 'String', default: '', meaning: 'Service account name' },
    TRUST_DOMAIN: { type: 'String', default: 'cluster.local', meaning: 'SPIFFE trust domain' },
    XDS_AUTH_PROVIDER: { type: 'String', default: '', meaning: 'xDS auth provider' },
    XDS_ROOT_CA: { type: 'String', default: '', meaning: 'Explicit root CA for the xDS connection' },
  },
  meshctl: {
    MESHCONFIG: { type: 'String', default: '$HOME/.meshctl/config.yaml', meaning: 'Default values for flags' },
    MESHCTL_AUTHORITY: { type: 'String', default: '', meaning: 'Overrides `--authority`' },
    MESHCTL_CERT_DIR: { type: 'String', default: '', meaning: 'Overrides `--cert-dir`' },
    MESHCTL_INSECURE: { type: 'Boolean', default: 'false', meaning: 'Overrides `--insecure`' },
    MESHCTL_MESHNAMESPACE: { type: 'String', default: 'mesh-system', meaning: 'Overrides `--meshNamespace`' },
    MESHCTL_PLAINTEXT: { type: 'Boolean', default: 'false', meaning: 'Overrides `--plaintext`' },
    MESHCTL_PREFER_EXPERIMENTAL: { type: 'Boolean', default: 'false', meaning: 'Use experimental variants of subcommands' },
    MESHCTL_XDS_ADDRESS: { type: 'String', default: '', meaning: 'Overrides `--xds-address`' },
    MESHCTL_XDS_PORT: { type: 'Integer', default: '15012', meaning: 'Overrides `--xds-port`', ...PORT },
    TERM: { type: 'String', default: '', meaning: '`dumb` suppresses colour' },
  },
} as const satisfies Record<SettingTable, Readonly<Record<string, SettingSpec>>>;

/** Which tables each program reads. The utility skips ORCH_SERVICE_HOST, which no table it reads holds. */
export const PROGRAM_TABLES = {
  'pilot-discovery': ['shared', 'daemon'],
  'pilot-agent': ['shared', 'agent'],
  meshctl: ['shared', 'meshctl'],
} as const satisfies Record<Program, readonly SettingTable[]>;

type Tables = typeof SETTING_TABLES;
type SpecsOf<P extends Program> = Tables['shared'] & Tables[(typeof PROGRAM_TABLES)[P][1]];

/** The names a program reads; for a union of programs, the names they all read. */
export type SettingName<P extends Program> = keyof SpecsOf<P> & string;

/** The runtime type of a setting type: durations are milliseconds. */
export type SettingTypeValue<T extends SettingType> = T extends 'Boolean' ? boolean : T extends 'String' ? string : number;

export type SettingValue<P extends Program, N extends SettingName<P>> = SpecsOf<P>[N] extends { readonly type: infer T extends SettingType }
  ? SettingTypeValue<T>
  : never;

/** The parsed, frozen settings of one program. */
export interface Settings<P extends Program = Program> {
  readonly program: P;
  /** The value in effect; throws for a name the program does not read. */
  get<N extends SettingName<P>>(name: N): SettingValue<P, N>;
  /** True when the environment gave a non-empty value. */
  isSet(name: SettingName<P>): boolean;
  /** Every setting of the program, sorted by name, rendered as the seeds write values. */
  describe(): SettingInfo[];
  /**
   * The non-empty environment variables named `<prefix><KEY>`, by KEY: a family passed through as
   * a whole rather than declared one by one (the proxy's `MESH_META_*` node metadata).
   */
  prefixed(prefix: string): Readonly<Record<string, string>>;
  /**
   * The settings with `values` laid under the environment: each is in effect, as if the
   * environment held it, where the environment gives no (non-empty) value of that name; the
   * prefixed families include them. The proxy config's `proxyMetadata` is applied so, as the
   * reference's agent takes it for environment (its node metadata: the environment's
   * `MESH_META_*` over proxyMetadata's). Throws a SettingsError, as `loadSettings` does.
   */
  withUnderlay(values: Readonly<Record<string, string>>): Settings<P>;
}

/** One bad environment value. */
export interface SettingIssue {
  readonly name: string;
  readonly value: string;
  readonly expected: string;
}

/** Bad environment values, all of them, one line each; the CLI exits with code 2. */
export class SettingsError extends UsageError {
  readonly issues: readonly SettingIssue[];

  constructor(issues: readonly SettingIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.issues = Object.freeze([...issues]);
  }
}

/** The specs a program reads, by name. */
export function programSettings(program: Program): ReadonlyMap<string, SettingSpec> {
  const tables = PROGRAM_TABLES[program];
  if (tables === undefined) throw new MeshError('unknown-program', `unknown program ${JSON.stringify(program)}`);
  const specs = new Map<string, SettingSpec>();
  for (const table of tables) {
    for (const [name, spec] of Object.entries(SETTING_TABLES[table] as Readonly<Record<string, SettingSpec>>)) {
      specs.set(name, spec);
    }
  }
  return specs;
}

/** A parsed value: strings, booleans, and numbers (milliseconds for durations). */
export type AnySettingValue = string | number | boolean;

interface Entry {
  readonly spec: SettingSpec;
  readonly value: AnySettingValue;
  readonly defaultValue: AnySettingValue;
  readonly isSet: boolean;
}

/**
 * Parses every setting `program` reads from `env` (the process environment, handed in by the
 * CLI). An empty value counts as unset. Throws a SettingsError listing every bad value.
 */
export function loadSettings<P extends Program>(program: P, env: Readonly<Record<string, string | undefined>>): Settings<P> {
  const entries = new Map<string, Entry>();
  const issues: SettingIssue[] = [];
  for (const [name, spec] of programSettings(program)) {
    const defaultValue = parseDefault(name, spec, env);
    const raw = env[name];
    if (raw === undefined || raw === '') {
      entries.set(name, { spec, value: defaultValue, defaultValue, isSet: false });
      continue;
    }
    const parsed = parseSettingValue(spec, raw);
    if (parsed.ok) {
      entries.set(name, { spec, value: parsed.value, defaultValue, isSet: true });
    } else {
      issues.push({ name, value: raw, expected: parsed.expected });
    }
  }
  if (issues.length > 0) throw new SettingsError(issues);

  const entryOf = (name: string): Entry => {
    const entry = entries.get(name);
    if (entry === undefined) {
      throw new MeshError('unknown-setting', `${program} does not read the setting ${JSON.stringify(name)}`);
    }
    return entry;
  };
  const environment = Object.freeze(
    Object.fromEntries(Object.entries(env).filter((pair): pair is [string, string] => pair[1] !== undefined && pair[1] !== '')),
  );
  const settings: Settings<P> = {
    program,
    withUnderlay: (values) => loadSettings(program, { ...env, ...values, ...environment }),
    prefixed: (prefix) =>
      Object.fromEntries(
        Object.entries(environment)
          .filter(([name]) => name.startsWith(prefix) && name.length > prefix.length)
          .map(([name, value]) => [name.slice(prefix.length), value]),
      ),
    get: <N extends SettingName<P>>(name: N) => entryOf(name).value as SettingValue<P, N>,
    isSet: (name) => entryOf(name).isSet,
    describe: () =>
      [...entries]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, entry]) => ({
          name,
          type: entry.spec.type,
          default: render(entry.spec.type, entry.defaultValue),
          value: render(entry.spec.type, entry.value),
          isSet: entry.isSet,
          meaning: entry.spec.meaning,
        })),
  };
  return Object.freeze(settings);
}

/** The outcome of parsing one raw value: the value, or what a valid value looks like. */
export type SettingParseResult = { readonly ok: true; readonly value: AnySettingValue } | { readonly ok: false; readonly expected: string };

const DURATION_SYNTAX = 'a duration such as 100ms or 1m0s';

/** Parses a raw (non-empty) value by the spec's type and checks its bounds and allowed values. */
export function parseSettingValue(spec: SettingSpec, raw: string): SettingParseResult {
  const value = parseTyped(spec.type, raw);
  if (value === undefined) {
    // A duration that does not parse gets the plain hint; bounds are a separate complaint.
    return { ok: false, expected: spec.type === 'Duration' ? DURATION_SYNTAX : expectedOf(spec) };
  }
  const allowed =
    typeof value === 'number'
      ? (spec.min === undefined || value >= spec.min) && (spec.max === undefined || value <= spec.max)
      : typeof value === 'string'
        ? spec.oneOf === undefined || spec.oneOf.includes(value)
        : true;
  if (!allowed) return { ok: false, expected: expectedOf(spec) };
  if (spec.syntax === 'cidr-list') {
    const list = parseCidrList(raw);
    if (!list.ok) return { ok: false, expected: `${expectedOf(spec)}; ${JSON.stringify(list.entry)} is not one` };
  }
  return { ok: true, value };
}

function parseTyped(type: SettingType, raw: string): AnySettingValue | undefined {
  switch (type) {
    case 'String':
      return raw;
    case 'Boolean':
      return parseBool(raw);
    case 'Integer': {
      if (!/^[+-]?[0-9]+$/.test(raw)) return undefined;
      const value = Number(raw);
      return Number.isSafeInteger(value) ? value : undefined;
    }
    case 'Float': {
      if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(raw)) return undefined;
      const value = Number(raw);
      return Number.isFinite(value) ? value : undefined;
    }
    case 'Duration':
      try {
        return parseDuration(raw);
      } catch {
        return undefined;
      }
  }
}

/** What a valid value of the spec looks like, as error messages say it. */
export function expectedOf(spec: SettingSpec): string {
  if (spec.expected !== undefined) return spec.expected;
  const { min, max } = spec;
  switch (spec.type) {
    case 'String':
      return spec.oneOf === undefined ? 'a string' : listAlternatives([...(spec.default === '' ? ['empty'] : []), ...spec.oneOf]);
    case 'Boolean':
      return 'true or false';
    case 'Integer':
      if (min !== undefined && max !== undefined) return `an integer from ${min} to ${max}`;
      if (min === 1) return 'a positive integer';
      if (min === 0) return 'a non-negative integer';
      return min === undefined ? 'an integer' : `an integer of at least ${min}`;
    case 'Float':
      if (min !== undefined && max !== undefined) return `a number from ${min.toFixed(1)} to ${max.toFixed(1)}`;
      return min === undefined ? 'a number' : `a number of at least ${min.toFixed(1)}`;
    case 'Duration':
      if (min === 0 && max === undefined) return 'a non-negative duration such as 100ms or 1m0s';
      return `${DURATION_SYNTAX}${durationBounds(min, max)}`;
  }
}

function durationBounds(min: number | undefined, max: number | undefined): string {
  const parts = [...(min === undefined ? [] : [`at least ${formatDuration(min)}`]), ...(max === undefined ? [] : [`at most ${formatDuration(max)}`])];
  return parts.length === 0 ? '' : `, ${parts.join(' and ')}`;
}

function formatIssue(issue: SettingIssue): string {
  return `invalid value ${JSON.stringify(issue.value)} for ${issue.name}: expected ${issue.expected}`;
}

function listAlternatives(values: readonly string[]): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** Go's strconv.ParseBool spellings. */
function parseBool(raw: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(raw)) return false;
  return undefined;
}

function parseDefault(name: string, spec: SettingSpec, env: Readonly<Record<string, string | undefined>>): AnySettingValue {
  const text = spec.default.startsWith('$HOME/') ? joinHome(env['HOME'] ?? '', spec.default.slice('$HOME/'.length)) : spec.default;
  if (text === '') return spec.type === 'String' ? '' : failDefault(name, spec, text);
  const parsed = parseSettingValue(spec, text);
  return parsed.ok ? parsed.value : failDefault(name, spec, text);
}

/** A default that does not parse is a bug in the tables above, not bad input. */
function failDefault(name: string, spec: SettingSpec, text: string): never {
  throw new MeshError('invalid-setting-default', `default ${JSON.stringify(text)} of ${name} is not ${expectedOf(spec)}`);
}

/** Like Go's filepath.Join(home, rest): no home leaves a relative path. */
function joinHome(home: string, rest: string): string {
  if (home === '') return rest;
  return home.endsWith('/') ? `${home}${rest}` : `${home}/${rest}`;
}

function render(type: SettingType, value: AnySettingValue): string {
  if (type === 'Duration') return formatDuration(value as number);
  return String(value);
}

/**
 * The process's own environment, parsed: the one place in the project that reads `process.env`.
 * Programs call it once at start-up and pass the frozen result down.
 */
export function loadProcessSettings<P extends Program>(program: P): Settings<P> {
  return loadSettings(program, processEnvironment());
}

/**
 * The process's environment as it is, for what is not a setting of ours: what a child process
 * inherits (PATH, HOME) and the switches of the test tools (REFRESH_GOLDEN). Read here only.
 */
export function processEnvironment(): Readonly<Record<string, string | undefined>> {
  return process.env;
}

/** Sets one variable of the process's environment (test tools put their binaries on PATH): written here only, as it is read. */
export function setProcessEnvironmentVariable(name: string, value: string): void {
  process.env[name] = value;
}
