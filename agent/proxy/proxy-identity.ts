import { hostname } from 'node:os';
import { parse } from 'yaml';
import { DEFAULT_MESH_CONFIG, loadMeshConfig, parseProxyConfigInput, type ProxyConfig } from '../../crds/mesh-config/index.js';
import { errorMessage, UsageError } from '../../runtime/index.js';
import type { JsonValue } from '../../xds/envoy/index.js';

export type ProxyType = 'sidecar' | 'router';

/** Node metadata, as JSON: mostly strings; LABELS an object, and what `MESH_METAJSON_*` gives. */
export type NodeMetadata = Readonly<Record<string, JsonValue>>;

/** The label the downward API's file carries that the reference leaves out of LABELS. */
const POD_TEMPLATE_HASH = 'pod-template-hash';

/** The downward API's labels file: `key="value"` lines, values JSON-quoted. */
export function parsePodLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const equals = line.indexOf('=');
    if (equals <= 0) continue;
    const raw = line.slice(equals + 1).trim();
    try {
      const value = JSON.parse(raw) as unknown;
      if (typeof value === 'string') labels[line.slice(0, equals).trim()] = value;
    } catch {
      // A line the kubelet did not write; skipped.
    }
  }
  return labels;
}

/** Who the proxy is: what its node id and metadata tell the daemon, and what its certificate carries. */
export interface ProxyIdentity {
  readonly type: ProxyType;
  readonly podName: string;
  readonly namespace: string;
  readonly instanceIp: string;
  readonly serviceAccount: string;
  readonly trustDomain: string;
  readonly domain: string;
  readonly clusterId: string;
  /** `<type>~<ip>~<pod>.<ns>~<domain>`. */
  readonly nodeId: string;
  /** `spiffe://<trust domain>/ns/<ns>/sa/<sa>`. */
  readonly spiffeId: string;
  readonly proxyConfig: ProxyConfig;
  /** Node metadata, as JSON: strings, and LABELS an object. */
  readonly metadata: NodeMetadata;
}

/**
 * The proxy config: the mesh config file's `defaultConfig` (defaults when the file is absent),
 * under PROXY_CONFIG (YAML or JSON of a ProxyConfig), as injection sets it.
 */
export function loadProxyConfig(meshConfigFile: string, proxyConfigText: string): ProxyConfig {
  let base: ProxyConfig;
  try {
    base = loadMeshConfig({ file: meshConfigFile }).defaultConfig;
  } catch (error) {
    throw new UsageError(`--meshConfig ${meshConfigFile}: ${errorMessage(error)}`);
  }
  if (proxyConfigText.trim() === '') return base;
  const parsed = parseProxyConfigInput(parse(proxyConfigText));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`PROXY_CONFIG: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return { ...base, ...parsed.data, proxyMetadata: { ...base.proxyMetadata, ...(parsed.data.proxyMetadata ?? {}) } } as ProxyConfig;
}

/** What injection tells the agent about its pod (`agent-settings.ts` maps it); '' where unset. */
export interface PodSettings {
  /** POD_NAME (injected from the pod's metadata); proxyMetadata's POD_NAME, then the host name, stand in when unset. */
  readonly name: string;
  /** POD_NAMESPACE. */
  readonly namespace: string;
  /** INSTANCE_IP. */
  readonly instanceIp: string;
  /** SERVICE_ACCOUNT. */
  readonly serviceAccount: string;
  /** TRUST_DOMAIN. */
  readonly trustDomain: string;
  /** MESH_META_CLUSTER_ID. */
  readonly clusterId: string;
  /** MESH_META_DNS_CAPTURE. */
  readonly dnsCapture: boolean;
  /** The pod's labels (the downward API's file), when mounted; undefined without the file (a VM). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Every `MESH_META_<KEY>` variable, by KEY: node metadata the injector sets (WORKLOAD_NAME, OWNER, POD_PORTS, APP_CONTAINERS, MESH_ID…). */
  readonly metaEnv?: Readonly<Record<string, string>>;
  /** Every `MESH_METAJSON_<KEY>` variable, by KEY: node metadata given as JSON (a VM's LABELS). */
  readonly metaJsonEnv?: Readonly<Record<string, string>>;
}

/**
 * The node metadata the environment gives: `MESH_META_<KEY>` is `<KEY>` as it is, and
 * `MESH_METAJSON_<KEY>` is `<KEY>` parsed as JSON (over a META of the same key). A JSON value
 * that does not parse is left out and named in `invalid`, as the reference warns and goes on.
 */
export function metadataFromEnvironment(pod: Pick<PodSettings, 'metaEnv' | 'metaJsonEnv'>): { metadata: Record<string, JsonValue>; invalid: string[] } {
  const metadata: Record<string, JsonValue> = { ...pod.metaEnv };
  const invalid: string[] = [];
  for (const [key, text] of Object.entries(pod.metaJsonEnv ?? {})) {
    try {
      metadata[key] = JSON.parse(text) as JsonValue;
    } catch {
      invalid.push(key);
    }
  }
  return { metadata, invalid };
}

/**
 * LABELS as the reference builds it: `MESH_METAJSON_LABELS` (a VM's, from its mesh.yaml), with
 * the downward API's labels over them when the file is there (`pod-template-hash` left out).
 */
export function nodeLabels(fromJson: JsonValue | undefined, fromFile: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (fromJson !== null && typeof fromJson === 'object' && !Array.isArray(fromJson)) {
    for (const [key, value] of Object.entries(fromJson)) if (typeof value === 'string') labels[key] = value;
  }
  for (const [key, value] of Object.entries(fromFile ?? {})) if (key !== POD_TEMPLATE_HASH) labels[key] = value;
  return labels;
}

export interface ProxyIdentityInput {
  readonly type: ProxyType;
  readonly pod: PodSettings;
  /** `--domain`; empty means `<namespace>.svc.cluster.local`. */
  readonly domain: string;
  readonly proxyConfig: ProxyConfig;
  /** The agent's build version, sent as `MESH_VERSION` (what `meshctl version` and `ps` show for the data plane). */
  readonly meshVersion: string;
}

/**
 * The identity of the proxy from what it knows of its pod and its proxy config. The proxy
 * config's `proxyMetadata` reaches it through the settings (`Settings.withUnderlay`): as
 * environment, `MESH_META_*` entries become node metadata and POD_NAME the pod's name.
 */
export function buildProxyIdentity(input: ProxyIdentityInput): ProxyIdentity {
  const { pod, proxyConfig } = input;
  const namespace = pod.namespace || 'default';
  const podName = pod.name || hostname();
  const instanceIp = pod.instanceIp || '127.0.0.1';
  const serviceAccount = pod.serviceAccount || 'default';
  const trustDomain = pod.trustDomain || DEFAULT_MESH_CONFIG.trustDomain;
  const domain = input.domain || `${namespace}.svc.cluster.local`;
  const clusterId = pod.clusterId;
  const fromEnvironment = metadataFromEnvironment(pod).metadata;
  const labels = nodeLabels(fromEnvironment['LABELS'], pod.labels);
  const { LABELS: _labels, ...environment } = fromEnvironment;
  const metadata: NodeMetadata = {
    ...environment,
    NAMESPACE: namespace,
    POD_NAME: podName,
    INSTANCE_IPS: instanceIp,
    SERVICE_ACCOUNT: serviceAccount,
    MESH_VERSION: input.meshVersion,
    ...(clusterId ? { CLUSTER_ID: clusterId } : {}),
    ...(pod.dnsCapture ? { DNS_CAPTURE: 'true' } : {}),
    ...(Object.keys(labels).length > 0 ? { LABELS: labels } : {}),
    // The reference sends the whole proxy config; the daemon reads only its readinessProbe (a VM's
    // health checks are on when it has one), so it goes only when it carries one.
    ...(proxyConfig.readinessProbe !== undefined ? { PROXY_CONFIG: JSON.parse(JSON.stringify(proxyConfig)) as JsonValue } : {}),
  };
  return {
    type: input.type,
    podName,
    namespace,
    instanceIp,
    serviceAccount,
    trustDomain,
    domain,
    clusterId,
    nodeId: `${input.type}~${instanceIp}~${podName}.${namespace}~${domain}`,
    spiffeId: `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`,
    proxyConfig,
    metadata,
  };
}
