import { isIP } from 'node:net';
import { stringify } from 'yaml';
import { DEFAULT_MESH_CONFIG, type MeshConfigInput } from '../../crds/mesh-config/index.js';
import { DAEMON_NAME, LABELS, revisionedName } from '../../names/index.js';

/** The parts of a WorkloadGroup `x workload entry configure` reads, its defaults filled in. */
export interface EntryGroup {
  readonly name: string;
  readonly namespace: string;
  /** The group object's own annotations (`proxy.mesh.io/config` is read from both these and the spec's). */
  readonly annotations: Readonly<Record<string, string>>;
  readonly metadataLabels: Readonly<Record<string, string>>;
  readonly metadataAnnotations: Readonly<Record<string, string>>;
  readonly templateLabels: Readonly<Record<string, string>>;
  readonly ports: Readonly<Record<string, number>>;
  /** `default` when the template names none. */
  readonly serviceAccount: string;
  readonly network: string;
  readonly probe?: Readonly<Record<string, unknown>>;
}

/** What the files are made from besides the group: the cluster's mesh config and the flags. */
export interface EntryFilesInput {
  readonly group: EntryGroup;
  /** The mesh config (the `mesh` ConfigMap's `mesh` key), validated; its `defaultConfig` as written. */
  readonly meshConfig: MeshConfigInput;
  /** ProxyConfig overlays from the group's `proxy.mesh.io/config` annotations, in order, validated. */
  readonly proxyConfigOverlays: readonly Readonly<Record<string, unknown>>[];
  readonly meshNamespace: string;
  /** `-r/--revision`; '' or `default` for the default control plane. */
  readonly revision: string;
  readonly clusterId: string;
  readonly captureDns: boolean;
  readonly autoregister: boolean;
  /** `--workloadIP`; '' when unset. */
  readonly workloadIp: string;
  /** The address the VM reaches the daemon at (`--ingressIP` or the ingress Service's); '' when none is known. */
  readonly ingressIp: string;
}

/** The text files of the output folder but the root certificate and the token, by file name; and what to warn about. */
export interface EntryFiles {
  readonly files: Readonly<Record<string, string>>;
  readonly warnings: readonly string[];
}

/** The daemon's xDS and CA port, where `CA_ADDR` and `discoveryAddress` point for a revision. */
const DAEMON_XDS_TLS_PORT = 15012;

const isRevisioned = (revision: string): boolean => revision !== '' && revision !== 'default';

/** `meshd[-<revision>].<mesh namespace>.svc`: the daemon's name the VM resolves through `hosts`. */
export function daemonHost(meshNamespace: string, revision: string): string {
  return `${revisionedName(DAEMON_NAME, revision)}.${meshNamespace}.svc`;
}

/** A value for a shell to read back as it was: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

function envFile(entries: Readonly<Record<string, string>>): string {
  const lines = Object.entries(entries).map(([key, value]) => `${key}=${shellQuote(value)}`);
  return `${lines.sort().join('\n')}\n`;
}

const sortedObject = (map: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** `service.mesh.io/canonical-name` and `-revision` of the group's workloads, as injection derives them for pods. */
function canonicalService(labels: Readonly<Record<string, string>>, workload: string): { name: string; revision: string } {
  const first = (...keys: string[]): string | undefined => keys.map((key) => labels[key]).find((value) => value !== undefined && value !== '');
  return {
    name: first(LABELS.canonicalName, 'app.kubernetes.io/name', 'app') ?? workload,
    revision: first(LABELS.canonicalRevision, 'app.kubernetes.io/version', 'version') ?? 'latest',
  };
}

/**
 * The proxy config the VM's agent runs with: the mesh config's `defaultConfig` as the cluster
 * writes it, under the group's `proxy.mesh.io/config` annotations (field by field, proxyMetadata
 * key by key), with the group's probe as `readinessProbe` and the node metadata of the workload.
 */
function vmProxyConfig(input: EntryFilesInput, labels: Record<string, string>): Record<string, unknown> {
  const { group } = input;
  let config: Record<string, unknown> = { ...(input.meshConfig.defaultConfig ?? {}) };
  for (const overlay of input.proxyConfigOverlays) {
    const metadata = {
      ...(config['proxyMetadata'] as Record<string, string> | undefined),
      ...(overlay['proxyMetadata'] as Record<string, string> | undefined),
    };
    config = { ...config, ...overlay, proxyMetadata: metadata };
  }
  if (isRevisioned(input.revision) && !config['discoveryAddress'])
    config['discoveryAddress'] = `${daemonHost(input.meshNamespace, input.revision)}:${DAEMON_XDS_TLS_PORT}`;
  delete config['readinessProbe'];
  if (group.probe) config['readinessProbe'] = group.probe;
  const canonical = canonicalService(labels, group.name);
  const portList = Object.entries(group.ports)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, containerPort]) => ({ name, containerPort }));
  const metadata: Record<string, string> = {
    ...(config['proxyMetadata'] as Record<string, string> | undefined),
    CANONICAL_SERVICE: canonical.name,
    CANONICAL_REVISION: canonical.revision,
    POD_NAMESPACE: group.namespace,
    SERVICE_ACCOUNT: group.serviceAccount,
    TRUST_DOMAIN: input.meshConfig.trustDomain ?? DEFAULT_MESH_CONFIG.trustDomain,
    MESH_META_CLUSTER_ID: input.clusterId,
    MESH_META_MESH_ID: typeof config['meshId'] === 'string' ? config['meshId'] : '',
    MESH_META_NETWORK: group.network,
    ...(portList.length > 0 ? { MESH_META_POD_PORTS: JSON.stringify(portList) } : {}),
    MESH_META_WORKLOAD_NAME: group.name,
    MESH_METAJSON_LABELS: JSON.stringify(sortedObject({ ...labels, [LABELS.canonicalName]: canonical.name, [LABELS.canonicalRevision]: canonical.revision })),
    ...(input.captureDns ? { MESH_META_DNS_CAPTURE: 'true' } : {}),
    ...(input.autoregister ? { MESH_META_AUTO_REGISTER_GROUP: group.name } : {}),
  };
  return { ...config, proxyMetadata: metadata };
}

/** Ports kept out of inbound capture: ssh, the proxy's metrics and health ports, and the agent's status port. */
function localExcludePorts(statusPort: unknown): string {
  const ports = ['22', '15090', '15021'];
  if (statusPort !== 15090 && statusPort !== 15021) ports.push(typeof statusPort === 'number' && statusPort !== 0 ? String(statusPort) : '15020');
  return ports.join(',');
}

/**
 * The files `x workload entry configure` writes beside the root certificate and the token:
 * `mesh.yaml` (the proxy config under `defaultConfig`, keys sorted), `cluster.env` (its
 * proxyMetadata and the capture settings of the VM, `KEY='value'` lines sorted), `sidecar.env`
 * (the workload's address, only with `--workloadIP`) and `hosts` (the daemon's name at the
 * ingress address; empty, with a warning, when no address is known).
 */
export function entryFiles(input: EntryFilesInput): EntryFiles {
  const { group } = input;
  const warnings: string[] = [];
  const labels: Record<string, string> = { ...group.metadataLabels };
  if (Object.keys(group.templateLabels).length > 0) {
    const listed = Object.entries(sortedObject(group.templateLabels)).map(([key, value]) => `${key}=${value}`);
    warnings.push(`labels should be set in spec.metadata.labels; these spec.template.labels override them: ${listed.join(',')}`);
    Object.assign(labels, group.templateLabels);
  }
  const proxyConfig = vmProxyConfig(input, labels);
  const ports = Object.values(group.ports)
    .sort((a, b) => a - b)
    .map(String);
  const clusterEnv: Record<string, string> = {
    ...(proxyConfig['proxyMetadata'] as Record<string, string>),
    MESH_INBOUND_PORTS: ports.length > 0 ? ports.join(',') : '*',
    MESH_NAMESPACE: group.namespace,
    MESH_SERVICE: `${group.name}.${group.namespace}`,
    MESH_SERVICE_CIDR: '*',
    MESH_LOCAL_EXCLUDE_PORTS: localExcludePorts(proxyConfig['statusPort']),
    SERVICE_ACCOUNT: group.serviceAccount,
    ...(isRevisioned(input.revision) ? { CA_ADDR: `${daemonHost(input.meshNamespace, input.revision)}:${DAEMON_XDS_TLS_PORT}` } : {}),
  };
  const host = daemonHost(input.meshNamespace, input.revision);
  let hosts = '';
  if (isIP(input.ingressIp) !== 0) hosts = `${input.ingressIp} ${host}\n`;
  else
    warnings.push(
      `could not auto-detect the ingress address for ${host}: use --ingressIP to give the gateway address the VM reaches ${revisionedName(DAEMON_NAME, input.revision)} at`,
    );
  const files: Record<string, string> = {
    'cluster.env': envFile(clusterEnv),
    'mesh.yaml': stringify({ defaultConfig: proxyConfig }, { sortMapEntries: true, lineWidth: 0 }),
    hosts,
  };
  if (input.workloadIp !== '') files['sidecar.env'] = envFile({ INSTANCE_IP: input.workloadIp });
  return { files, warnings };
}
