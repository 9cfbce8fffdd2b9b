import type { KubeConfig } from '@kubernetes/client-node';
import { buildMeshConfig, KIND_NAMES, validateResource, type MeshConfig } from '../../crds/index.js';
import type { RecordedSightings } from '../../dataplane/decisions/index.js';
import { ANNOTATIONS } from '../../names/index.js';
import { errorMessage, MeshError, UsageError, type KubeObject } from '../../runtime/index.js';
import { readClusterState } from '../analyze/read-cluster.js';
import { readAnalysisFiles } from '../analyze/read-files.js';
import { podHttp } from '../kube/pod-http.js';
import { dumpOf, parseConfigDump } from '../proxyconfig/config-dump.js';
import { PROXY_ADMIN_PORT } from '../proxyconfig/pod-admin.js';
import { loadEnvoyProtos } from '../../xds/envoy/index.js';
import { newOfflineMesh, type ProxyNodeFacts } from './offline-decisions.js';
import { compareVerdicts, describeSourceBy, newlyReadHeaders, type VerdictReport, type WorkloadReplay } from './verdict-changes.js';

/** Kinds whose change a preview replays: what a sidecar's inbound decisions read. */
const PREVIEWED_KINDS = new Set(['AuthorizationPolicy', 'RequestAuthentication', 'PeerAuthentication']);

export interface AuthzPreviewInput {
  readonly kubeConfig: KubeConfig;
  /** `-f`: files or folders of the changed policies; `-` is standard input. */
  readonly files: readonly string[];
  /** `-n`: the namespace of objects that name none. */
  readonly namespace: string;
  readonly meshNamespace: string;
  readonly readStdin: () => Promise<string>;
}

type Pod = KubeObject & { spec?: { serviceAccountName?: string }; status?: { podIP?: string; phase?: string } };

const keyOf = (object: KubeObject): string => `${object.kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/**
 * `x authz preview`: the recent traffic of the workloads the changed policies select, replayed
 * through their proxies' decisions as the daemon's generators make them from the cluster's config
 * now and with the files applied; the requests whose verdict would change.
 */
export async function previewAuthzChange(input: AuthzPreviewInput): Promise<VerdictReport> {
  const changed = await readChangedObjects(input);
  const cluster = await readClusterState(input.kubeConfig, input.meshNamespace);
  const meshConfig = buildMeshConfig(cluster.meshConfigText, 'the mesh ConfigMap');
  const clusterObjects = cluster.objects.map((sourced) => sourced.object as KubeObject);
  const replaced = new Set(changed.map(keyOf));
  const proposedObjects = [...clusterObjects.filter((object) => !replaced.has(keyOf(object))), ...changed];
  const options = { meshConfig, domain: 'cluster.local', clusterId: 'Kubernetes', protos: loadEnvoyProtos() };
  const current = newOfflineMesh(clusterObjects, options);
  const proposed = newOfflineMesh(proposedObjects, options);
  const pods = clusterObjects.filter((object): object is Pod => object.kind === 'Pod');
  const podByAddress = new Map(
    pods.flatMap((pod) => (pod.status?.podIP ? [[pod.status.podIP, `${pod.metadata?.name}.${pod.metadata?.namespace}`] as const] : [])),
  );
  const selected = pods.filter((pod) => isMeshedAndRunning(pod) && changed.some((object) => selects(object, pod, meshConfig)));
  const caveats: string[] = [];
  const workloads: WorkloadReplay[] = [];
  for (const pod of selected) {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    try {
      const { node, entries } = await recentTrafficOf(input.kubeConfig, namespace, name);
      const now = current.configFor(node);
      const next = proposed.configFor(node);
      workloads.push({
        workload: `${name}.${namespace}`,
        entries,
        current: now.decisions,
        proposed: next.decisions,
        unreadHeaders: newlyReadHeaders(now.resources, next.resources),
      });
    } catch (error) {
      caveats.push(`${name}.${namespace}: no recent traffic: ${errorMessage(error)}`);
    }
  }
  const report = await compareVerdicts(workloads, describeSourceBy(podByAddress));
  return { ...report, caveats: [...caveats, ...report.caveats] };
}

/** The files' objects: mesh kinds only, each valid, in `-n` when they name no namespace. */
async function readChangedObjects(input: AuthzPreviewInput): Promise<KubeObject[]> {
  const read = await readAnalysisFiles(input.files, false, input.readStdin);
  const bad = read.unparsable[0];
  if (bad) throw new UsageError(`${bad.file}: not YAML or JSON: ${bad.reason}`, { exitCode: 65 });
  const objects: KubeObject[] = [];
  for (const { object: raw, source } of read.objects) {
    const object = raw as KubeObject;
    const where = `${source?.file ?? ''}:${source?.line ?? 0}`;
    if (!(KIND_NAMES as readonly string[]).includes(String(object.kind)))
      throw new UsageError(`${where}: ${String(object.kind)} is not a mesh config kind: preview takes ${[...PREVIEWED_KINDS].join(', ')}`, { exitCode: 64 });
    const placed = { ...object, metadata: { ...object.metadata, namespace: object.metadata?.namespace || input.namespace } } as KubeObject;
    const result = validateResource(placed);
    if (result.errors.length > 0)
      throw new UsageError(`${where}: ${placed.kind} ${placed.metadata?.name ?? ''}: ${result.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, {
        exitCode: 65,
      });
    objects.push(placed);
  }
  if (objects.length === 0) throw new UsageError('-f: the files hold no policy to preview', { exitCode: 64 });
  return objects;
}

function isMeshedAndRunning(pod: Pod): boolean {
  return pod.metadata?.annotations?.[ANNOTATIONS.status] !== undefined && pod.status?.phase === 'Running' && Boolean(pod.status.podIP);
}

/** Whether a changed policy applies to a pod: its namespace (all of them from the root namespace) and its selector. */
function selects(object: KubeObject, pod: Pod, meshConfig: MeshConfig): boolean {
  if (!PREVIEWED_KINDS.has(String(object.kind))) return false;
  const namespace = object.metadata?.namespace ?? '';
  if (namespace !== meshConfig.rootNamespace && namespace !== pod.metadata?.namespace) return false;
  const matchLabels = (object['spec'] as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels ?? {};
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(matchLabels).every(([key, value]) => labels[key] === value);
}

/** A pod's proxy node (from its bootstrap) and its traffic record, through port-forwards. */
async function recentTrafficOf(kubeConfig: KubeConfig, namespace: string, pod: string): Promise<{ node: ProxyNodeFacts; entries: RecordedSightings[] }> {
  const get = async (path: string): Promise<string> => {
    const response = await podHttp(kubeConfig, { namespace, pod, port: PROXY_ADMIN_PORT, method: 'GET', path });
    if (response.status >= 400) throw new MeshError('proxy-config-failed', `GET ${path}: ${response.status} ${response.body.trim()}`);
    return response.body;
  };
  const dump = parseConfigDump(await get('/config_dump'), `the config dump of ${pod}.${namespace}`);
  const node = (dumpOf(dump, 'BootstrapConfigDump')['bootstrap'] as { node?: { id?: string; metadata?: Record<string, unknown> } } | undefined)?.node;
  if (!node?.id) throw new MeshError('proxy-config-failed', 'its config dump names no node');
  const record = JSON.parse(await get('/recent_requests')) as { entries?: RecordedSightings[] };
  return { node: { id: node.id, metadata: node.metadata ?? {} }, entries: record.entries ?? [] };
}
