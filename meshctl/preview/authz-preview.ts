import type { KubeConfig } from '@kubernetes/client-node';
import { buildMeshConfig, KIND_NAMES, validateResource, type MeshConfig } from '../../crds/index.js';
import { ANNOTATIONS } from '../../names/index.js';
import { errorMessage, UsageError, type KubeObject } from '../../runtime/index.js';
import { readClusterState } from '../analyze/read-cluster.js';
import { readAnalysisFiles } from '../analyze/read-files.js';
import { loadEnvoyProtos } from '../../xds/envoy/index.js';
import { newOfflineMesh } from './offline-decisions.js';
import { podNamesByAddress, recentTrafficOf } from './recent-traffic.js';
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
  const podByAddress = podNamesByAddress(pods);
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
