import { LABELS, WORKLOAD_ENTRY_ANNOTATIONS } from '../../names/index.js';
import type { WorkloadEntrySpec, WorkloadGroupSpec } from '../../crds/index.js';

/**
 * The pure side of WorkloadEntry auto-registration and health checks (the reference's
 * `pilot/pkg/autoregistration`): the entry's name and content from its WorkloadGroup, the identity
 * check, the connect and disconnect annotations, the cleanup decision and the Healthy condition.
 */

const A = WORKLOAD_ENTRY_ANNOTATIONS;

/** A proxy on an xDS stream, as auto-registration reads it. */
export interface ConnectedWorkload {
  /** `<pod>.<namespace>`, for logs and errors. */
  readonly proxyId: string;
  /** Metadata NAMESPACE: where the entry lives. */
  readonly namespace: string;
  readonly ips: readonly string[];
  /** Metadata NETWORK. */
  readonly network?: string;
  /** The xDS node's locality as `region/zone/subzone`. */
  readonly locality?: string;
  /** Metadata LABELS. */
  readonly labels: Readonly<Record<string, string>>;
  /** Metadata AUTO_REGISTER_GROUP. */
  readonly autoRegisterGroup?: string;
  /** Metadata WORKLOAD_ENTRY: an existing entry the proxy is. */
  readonly workloadEntry?: string;
  /** The proxy config carries a readinessProbe: the agent reports health. */
  readonly hasReadinessProbe: boolean;
  /** The stream's authenticated identity; absent on an unauthenticated stream. */
  readonly verifiedIdentity?: { readonly namespace: string; readonly serviceAccount: string };
  /** When the stream opened (ms since the epoch). */
  readonly connectedAt: number;
}

export interface StatusCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly message?: string;
  readonly lastProbeTime?: string;
  readonly lastTransitionTime?: string;
  readonly [field: string]: unknown;
}

export interface ObjectMetaView {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly ownerReferences?: readonly Record<string, unknown>[];
}

/** A WorkloadEntry as read from and written to the API server. */
export interface WorkloadEntryObject {
  readonly apiVersion: string;
  readonly kind: 'WorkloadEntry';
  readonly metadata: ObjectMetaView;
  readonly spec: WorkloadEntrySpec;
  readonly status?: { readonly conditions?: readonly StatusCondition[]; readonly [field: string]: unknown };
}

export interface WorkloadGroupObject {
  readonly apiVersion: string;
  readonly kind: 'WorkloadGroup';
  readonly metadata: ObjectMetaView;
  readonly spec: WorkloadGroupSpec;
}

/** Kubernetes limits object names to 253 characters. */
const MAX_NAME = 253;

/**
 * `<group>-<first IP with ':' → '-'>[-<network>]`; a name over 253 characters keeps its end (the
 * reference shortens from the front).
 */
export function autoRegisteredEntryName(group: string, ip: string, network?: string): string {
  const name = [group, ip.replaceAll(':', '-'), ...(network ? [network] : [])].join('-');
  return name.length > MAX_NAME ? name.slice(name.length - MAX_NAME) : name;
}

/**
 * Whether the proxy may control an entry of `namespace` with `serviceAccount`: a verified identity
 * of that namespace, and of that service account when the entry names one. The refusal's message
 * when not.
 */
export function identityMismatch(workload: ConnectedWorkload, namespace: string, serviceAccount: string | undefined): string | undefined {
  const identity = workload.verifiedIdentity;
  if (!identity) return 'registration of WorkloadEntry requires a verified identity';
  if (identity.namespace !== namespace) return `registration of WorkloadEntry namespace mismatch: "${identity.namespace}" vs "${namespace}"`;
  if (serviceAccount && identity.serviceAccount !== serviceAccount) {
    return `registration of WorkloadEntry service account mismatch: "${identity.serviceAccount}" vs "${serviceAccount}"`;
  }
  return undefined;
}

/**
 * The entry a workload of the group gets: the template with the workload's address, network and
 * locality; labels from the template, then the group's metadata, then the proxy's (its locality
 * label dropped); annotations naming the group, the group's own, and health checks when the proxy
 * probes; owned by the group (deleting the group collects its entries).
 */
export function buildEntryFromGroup(name: string, workload: ConnectedWorkload, group: WorkloadGroupObject, apiVersion: string): WorkloadEntryObject {
  const template = group.spec.template ?? {};
  const { [LABELS.locality]: _locality, ...proxyLabels } = workload.labels;
  const labels = { ...template.labels, ...group.spec.metadata?.labels, ...proxyLabels };
  const annotations: Record<string, string> = { [A.autoRegistrationGroup]: group.metadata.name, ...group.spec.metadata?.annotations };
  if (workload.hasReadinessProbe) annotations[A.healthChecksEnabled] = 'true';
  const spec: WorkloadEntrySpec = {
    ...template,
    address: workload.ips[0] ?? '',
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(workload.network ? { network: workload.network } : {}),
    ...(workload.locality ? { locality: workload.locality } : {}),
  };
  return {
    apiVersion,
    kind: 'WorkloadEntry',
    metadata: {
      name,
      namespace: workload.namespace,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      annotations,
      ownerReferences: [{ apiVersion: group.apiVersion, kind: 'WorkloadGroup', name: group.metadata.name, uid: group.metadata.uid ?? '', controller: true }],
    },
    spec,
  };
}

/** RFC 3339 with the fraction, as the reference writes connect times. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}

function parseTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

export function connectedAtOf(entry: WorkloadEntryObject): number | undefined {
  return parseTime(entry.metadata.annotations?.[A.connectedAt]);
}

/** This instance controls the entry since `at`; a disconnect mark goes. */
export function withConnected(entry: WorkloadEntryObject, instanceId: string, at: number): WorkloadEntryObject {
  const { [A.disconnectedAt]: _gone, ...annotations } = entry.metadata.annotations ?? {};
  return { ...entry, metadata: { ...entry.metadata, annotations: { ...annotations, [A.workloadController]: instanceId, [A.connectedAt]: formatTime(at) } } };
}

export function withDisconnected(entry: WorkloadEntryObject, at: number): WorkloadEntryObject {
  const { [A.connectedAt]: _gone, ...annotations } = entry.metadata.annotations ?? {};
  return { ...entry, metadata: { ...entry.metadata, annotations: { ...annotations, [A.disconnectedAt]: formatTime(at) } } };
}

/**
 * Whether a disconnect at `disconnectedAt` of the stream opened at `connectedAt` may mark the
 * entry: this instance controls it and no later connect was written.
 */
export function mayMarkDisconnected(entry: WorkloadEntryObject, instanceId: string, connectedAt: number, disconnectedAt: number): boolean {
  const latest = connectedAtOf(entry);
  if (latest !== undefined && latest > connectedAt) return false;
  if (entry.metadata.annotations?.[A.workloadController] !== instanceId) return false;
  return latest === undefined || disconnectedAt >= latest;
}

export function isAutoRegistered(entry: WorkloadEntryObject): boolean {
  return (entry.metadata.annotations?.[A.autoRegistrationGroup] ?? '') !== '';
}

/** Health reports count for an entry that carries the annotation, whatever its value. */
export function acceptsHealthReports(entry: WorkloadEntryObject): boolean {
  return entry.metadata.annotations?.[A.healthChecksEnabled] !== undefined;
}

export function healthConditionOf(status: unknown): StatusCondition | undefined {
  const conditions = typeof status === 'object' && status !== null ? (status as { conditions?: unknown }).conditions : undefined;
  if (!Array.isArray(conditions)) return undefined;
  return (conditions as StatusCondition[]).find((condition) => condition?.type === 'Healthy');
}

/**
 * Whether the entry's endpoints are ready: with health checks on (the annotation `true`), only
 * once a probe said Healthy; otherwise always.
 */
export function isHealthyEntry(annotations: Readonly<Record<string, string>> | undefined, status: unknown): boolean {
  if (annotations?.[A.healthChecksEnabled]?.toLowerCase() !== 'true') return true;
  return healthConditionOf(status)?.status === 'True';
}

/** The Healthy condition of one report: probe and transition at the report's time, as the agent reports transitions only. */
export function buildHealthCondition(healthy: boolean, message: string, at: number): StatusCondition {
  const time = formatTime(at);
  return { type: 'Healthy', status: healthy ? 'True' : 'False', ...(healthy ? {} : { message }), lastProbeTime: time, lastTransitionTime: time };
}

/** The status with the Healthy condition replaced (or removed when `condition` is undefined); other conditions kept. */
export function withHealthCondition(status: WorkloadEntryObject['status'], condition: StatusCondition | undefined): NonNullable<WorkloadEntryObject['status']> {
  const others = (status?.conditions ?? []).filter((existing) => existing.type !== 'Healthy');
  return { ...status, conditions: condition ? [...others, condition] : others };
}

/** A report older than the condition written is dropped. */
export function isNewerReport(status: unknown, condition: StatusCondition): boolean {
  const written = parseTime(healthConditionOf(status)?.lastProbeTime);
  const probed = parseTime(condition.lastProbeTime);
  return written === undefined || probed === undefined || probed >= written;
}

/**
 * Whether the sweep or the grace timer removes the entry (auto-registered: deleted) or its Healthy
 * condition (health-checked only): disconnected longer than the grace period, or still marked
 * connected 2.25 × the maximum connection age after connecting (both the workload and its daemon
 * died before the disconnect was written). The reference stretches the age by 1.5 twice: 2.25 ×.
 */
export function shouldCleanup(entry: WorkloadEntryObject, now: number, gracePeriodMs: number, maxConnectionAgeMs: number): boolean {
  const annotations = entry.metadata.annotations ?? {};
  const healthChecked = (annotations[A.workloadController] ?? '') !== '' && !isAutoRegistered(entry);
  if (!isAutoRegistered(entry) && !(healthChecked && healthConditionOf(entry.status))) return false;
  if ((annotations[A.connectedAt] ?? '') !== '') {
    const connectedAt = connectedAtOf(entry);
    return connectedAt !== undefined && now - connectedAt > maxConnectionAgeMs * 2.25;
  }
  const disconnectedAt = annotations[A.disconnectedAt];
  if (!disconnectedAt) return false;
  const at = parseTime(disconnectedAt);
  return at === undefined || now - at >= gracePeriodMs;
}
