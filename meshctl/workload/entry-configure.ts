import { isIP } from 'node:net';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { MESH_CONFIG_MAP_KEY, parseMeshConfigYaml, parseProxyConfigInput, type MeshConfigInput } from '../../crds/mesh-config/index.js';
import { ANNOTATIONS, MESH_CONFIG_MAP_NAME, revisionedName } from '../../names/index.js';
import { errorMessage, MeshError, UsageError } from '../../runtime/index.js';
import { XDS_TOKEN_AUDIENCE } from '../xds/xds-credentials.js';
import { entryFiles, type EntryGroup } from './entry-files.js';
import { describeApiError, readGroupFile, readGroupFromCluster } from './entry-group.js';

/** What `x workload entry configure` is given (seed 3's flags, and the global ones it reads). */
export interface EntryConfigureOptions {
  /** `-f/--file`: the WorkloadGroup's YAML; '' to read it from the API server. */
  readonly file: string;
  /** `--name`, with `-n`: the WorkloadGroup on the API server. */
  readonly name: string;
  readonly namespace: string;
  /** `-o/--output`: the folder written. */
  readonly output: string;
  readonly meshNamespace: string;
  readonly revision: string;
  readonly clusterId: string;
  readonly tokenDurationSeconds: number;
  readonly ingressIp: string;
  /** `<service>` (in the mesh namespace) or `<service>.<namespace>`. */
  readonly ingressService: string;
  readonly captureDns: boolean;
  readonly autoregister: boolean;
  readonly workloadIp: string;
}

/** The file names the VM's agent is given: its token file as the agent reads it (`mesh-token`), and the root certificate. */
export const ENTRY_TOKEN_FILE = 'mesh-token';
export const ENTRY_ROOT_CERT_FILE = 'root-cert.pem';
/** The ConfigMap the daemon publishes the root certificate in, in every namespace, and its key. */
export const ROOT_CERT_CONFIG_MAP = 'mesh-ca-root-cert';
const ROOT_CERT_KEY = 'root-cert.pem';

/** Refuses flags that cannot work, naming them, before anything is read. */
export function checkEntryConfigureFlags(options: EntryConfigureOptions): void {
  if (options.file === '' && (options.name === '' || options.namespace === ''))
    throw new UsageError('expecting a WorkloadGroup artifact file (-f) or the name (--name) and namespace (-n) of an existing WorkloadGroup');
  if (options.output === '') throw new UsageError('expecting an output directory (-o)');
  for (const [flag, value] of [
    ['--ingressIP', options.ingressIp],
    ['--workloadIP', options.workloadIp],
  ] as const) {
    if (value !== '' && isIP(value) === 0) throw new UsageError(`${flag} ${JSON.stringify(value)}: expected an IP address`);
  }
  if (!Number.isSafeInteger(options.tokenDurationSeconds) || options.tokenDurationSeconds <= 0)
    throw new UsageError(`--tokenDuration ${options.tokenDurationSeconds}: expected a positive number of seconds`);
}

const failed = (message: string, cause: unknown): MeshError => new MeshError('workload-entry-config-failed', message, { cause });

async function readMeshConfig(core: CoreV1Api, options: EntryConfigureOptions): Promise<MeshConfigInput> {
  const name = revisionedName(MESH_CONFIG_MAP_NAME, options.revision);
  const configMap = await core.readNamespacedConfigMap({ name, namespace: options.meshNamespace }).catch((error: unknown) => {
    throw failed(`configmap ${name} was not found in namespace ${options.meshNamespace}: ${describeApiError(error)}`, error);
  });
  try {
    return parseMeshConfigYaml(configMap.data?.[MESH_CONFIG_MAP_KEY] ?? '', `ConfigMap ${options.meshNamespace}/${name}`);
  } catch (error) {
    throw failed(errorMessage(error), error);
  }
}

/** The group's `proxy.mesh.io/config` annotations (the object's, then its spec's), checked as ProxyConfigs. */
function proxyConfigOverlays(group: EntryGroup): Record<string, unknown>[] {
  const key = ANNOTATIONS.proxyConfig;
  return [group.annotations[key], group.metadataAnnotations[key]].flatMap((text) => {
    if (text === undefined) return [];
    const where = `annotation ${key} of WorkloadGroup ${group.namespace}/${group.name}`;
    let value: unknown;
    try {
      value = parse(text);
    } catch (error) {
      throw new UsageError(`${where}: ${errorMessage(error)}`, { cause: error });
    }
    const parsed = parseProxyConfigInput(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(`${where}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    return [value as Record<string, unknown>];
  });
}

async function readRootCert(core: CoreV1Api, namespace: string): Promise<string> {
  const configMap = await core.readNamespacedConfigMap({ name: ROOT_CERT_CONFIG_MAP, namespace }).catch((error: unknown) => {
    throw failed(`configmap ${ROOT_CERT_CONFIG_MAP} was not found in namespace ${namespace}: ${describeApiError(error)}`, error);
  });
  const pem = configMap.data?.[ROOT_CERT_KEY] ?? '';
  if (pem === '') throw failed(`configmap ${ROOT_CERT_CONFIG_MAP} in namespace ${namespace} has no ${ROOT_CERT_KEY}`, undefined);
  return pem;
}

/** A bound token of the template's service account, for the CA's audience, lasting `--tokenDuration`. */
async function requestToken(core: CoreV1Api, group: EntryGroup, expirationSeconds: number): Promise<string> {
  const { serviceAccount, namespace } = group;
  const answer = await core
    .createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec: { audiences: [XDS_TOKEN_AUDIENCE], expirationSeconds } } })
    .catch((error: unknown) => {
      throw failed(`could not create a token under service account ${serviceAccount} in namespace ${namespace}: ${describeApiError(error)}`, error);
    });
  const token = answer.status?.token ?? '';
  if (token === '')
    throw failed(`could not create a token under service account ${serviceAccount} in namespace ${namespace}: the answer holds no token`, undefined);
  return token;
}

/** `--ingressIP`, else the ingress Service's first load balancer IP, else its first external IP; '' when none. */
async function ingressAddress(core: CoreV1Api, options: EntryConfigureOptions): Promise<string> {
  if (options.ingressIp !== '') return options.ingressIp;
  const parts = options.ingressService.split('.');
  const [name, namespace] = parts.length === 2 ? [parts[0] ?? '', parts[1] ?? ''] : [options.ingressService, options.meshNamespace];
  const service = await core.readNamespacedService({ name, namespace }).catch(() => undefined);
  const candidates = [...(service?.status?.loadBalancer?.ingress ?? []).map((ingress) => ingress.ip ?? ''), ...(service?.spec?.externalIPs ?? [])];
  return candidates.find((ip) => isIP(ip) !== 0) ?? '';
}

/**
 * `x workload entry configure`: reads the WorkloadGroup, the mesh config, the root certificate
 * and a token from the cluster, then writes the VM's files into `-o` (all of them, or none when a
 * read fails). Warnings (the token written, no ingress address) go to `warn`. Returns the line printed.
 */
export async function configureWorkloadEntry(
  kubeConfig: () => Promise<KubeConfig>,
  options: EntryConfigureOptions,
  warn: (line: string) => void,
): Promise<string> {
  checkEntryConfigureFlags(options);
  const group = options.file !== '' ? await readGroupFile(options.file, options.namespace) : undefined;
  const cluster = await kubeConfig();
  const resolved = group ?? (await readGroupFromCluster(cluster, options.name, options.namespace));
  const k8s = await import('@kubernetes/client-node');
  const core = cluster.makeApiClient(k8s.CoreV1Api);
  const meshConfig = await readMeshConfig(core, options);
  const overlays = proxyConfigOverlays(resolved);
  const rootCert = await readRootCert(core, resolved.namespace);
  const token = await requestToken(core, resolved, options.tokenDurationSeconds);
  const ingressIp = await ingressAddress(core, options);
  const { files, warnings } = entryFiles({ ...options, group: resolved, meshConfig, proxyConfigOverlays: overlays, ingressIp });
  try {
    await mkdir(options.output, { recursive: true, mode: 0o755 });
    for (const [name, text] of Object.entries(files)) await writeFile(join(options.output, name), text, { mode: 0o644 });
    await writeFile(join(options.output, ENTRY_ROOT_CERT_FILE), rootCert, { mode: 0o644 });
    // Readable by its owner alone, also when an earlier run left the file.
    await writeFile(join(options.output, ENTRY_TOKEN_FILE), token, { mode: 0o600 });
    await chmod(join(options.output, ENTRY_TOKEN_FILE), 0o600);
  } catch (error) {
    throw new UsageError(`-o ${options.output}: ${errorMessage(error)}`, { cause: error });
  }
  const tokenPath = join(options.output, ENTRY_TOKEN_FILE);
  warn(
    `Warning: a security token for namespace "${resolved.namespace}" and service account "${resolved.serviceAccount}" has been generated and stored at "${tokenPath}"`,
  );
  for (const warning of warnings) warn(`Warning: ${warning}`);
  return `Configuration generation into directory ${options.output} was successful\n`;
}
