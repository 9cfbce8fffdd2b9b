import type { KubeConfig } from '@kubernetes/client-node';
import type { RecordedSightings } from '../../dataplane/decisions/index.js';
import { ANNOTATIONS } from '../../names/index.js';
import { errorMessage, type KubeObject } from '../../runtime/index.js';
import { formatTable } from '../kube/table.js';
import { podNamesByAddress, recentRequestsOf } from './recent-traffic.js';

type Pod = KubeObject & { status?: { podIP?: string; phase?: string } };

/** Plain-text callers of one port of a workload, by source address. */
export interface PlaintextCallers {
  readonly namespace: string;
  readonly workload: string;
  readonly port: number;
  readonly callers: readonly { readonly source: string; readonly calls: number; readonly lastSeen: string }[];
}

export interface ReadinessReport {
  /** Per namespace: READY when no workload port took plain text in the window. */
  readonly namespaces: readonly { readonly namespace: string; readonly ready: boolean; readonly workloads: number }[];
  readonly plaintext: readonly PlaintextCallers[];
  readonly caveats: readonly string[];
}

export interface ReadinessInput {
  readonly kubeConfig: KubeConfig;
  /** Every meshed pod of these namespaces, or only `pod`. */
  readonly namespace: string;
  readonly pod?: string;
  /** Only traffic seen this recently counts. */
  readonly sinceMs: number;
  readonly now?: Date;
}

/**
 * `x mtls readiness`: whether STRICT mutual TLS would cut anyone off, from the traffic the proxies
 * recorded: each meshed workload port's plain-text callers (by address, with the pod when known),
 * seen within the window; a namespace is READY when it has none.
 */
export async function mtlsReadiness(input: ReadinessInput): Promise<ReadinessReport> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = input.kubeConfig.makeApiClient(CoreV1Api);
  const pods = (await core.listPodForAllNamespaces()).items as unknown as Pod[];
  const podByAddress = podNamesByAddress(pods);
  const selected = pods.filter(
    (pod) =>
      pod.metadata?.namespace === input.namespace &&
      (input.pod === undefined || pod.metadata?.name === input.pod) &&
      pod.metadata?.annotations?.[ANNOTATIONS.status] !== undefined &&
      pod.status?.phase === 'Running',
  );
  const since = (input.now ?? new Date()).getTime() - input.sinceMs;
  const plaintext: PlaintextCallers[] = [];
  const caveats: string[] = [];
  for (const pod of selected) {
    const name = pod.metadata?.name ?? '';
    let entries: RecordedSightings[];
    try {
      entries = await recentRequestsOf(input.kubeConfig, input.namespace, name);
    } catch (error) {
      caveats.push(`${name}.${input.namespace}: no recent traffic: ${errorMessage(error)}`);
      continue;
    }
    const byPort = new Map<number, Map<string, { calls: number; lastSeen: string }>>();
    for (const entry of entries) {
      if (entry.direction !== 'inbound' || entry.connection.transportProtocol !== 'raw_buffer' || Date.parse(entry.lastSeen) < since) continue;
      const address = entry.connection.sourceAddress;
      const source = podByAddress.has(address) ? `${address} (${podByAddress.get(address)})` : address;
      const callers = byPort.get(entry.connection.destinationPort) ?? new Map<string, { calls: number; lastSeen: string }>();
      const seen = callers.get(source) ?? { calls: 0, lastSeen: entry.lastSeen };
      callers.set(source, { calls: seen.calls + entry.count, lastSeen: entry.lastSeen > seen.lastSeen ? entry.lastSeen : seen.lastSeen });
      byPort.set(entry.connection.destinationPort, callers);
    }
    for (const [port, callers] of [...byPort].sort(([a], [b]) => a - b)) {
      plaintext.push({
        namespace: input.namespace,
        workload: `${name}.${input.namespace}`,
        port,
        callers: [...callers].map(([source, seen]) => ({ source, ...seen })),
      });
    }
  }
  return { namespaces: [{ namespace: input.namespace, ready: plaintext.length === 0, workloads: selected.length }], plaintext, caveats };
}

export function renderReadiness(report: ReadinessReport): string {
  const lines: string[] = [];
  const rows = report.plaintext.flatMap((row) =>
    row.callers.map((caller) => [row.namespace, row.workload, String(row.port), caller.source, String(caller.calls), caller.lastSeen]),
  );
  if (rows.length > 0) lines.push(formatTable([['NAMESPACE', 'WORKLOAD', 'PORT', 'PLAINTEXT CALLER', 'CALLS', 'LAST SEEN'], ...rows], 3).trimEnd(), '');
  for (const namespace of report.namespaces) {
    const ports = report.plaintext.filter((row) => row.namespace === namespace.namespace).length;
    lines.push(
      namespace.ready
        ? `${namespace.namespace}: READY (${namespace.workloads} meshed workloads, no plain-text caller seen)`
        : `${namespace.namespace}: NOT READY (${ports} workload ${ports === 1 ? 'port takes' : 'ports take'} plain text: STRICT would refuse these callers)`,
    );
  }
  for (const caveat of report.caveats) lines.push(`Note: ${caveat}`);
  return `${lines.join('\n')}\n`;
}
