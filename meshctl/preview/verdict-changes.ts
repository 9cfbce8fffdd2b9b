import {
  policyReadable,
  sameVerdict,
  type ProxyDecisions,
  type ProxyResources,
  type RecordedSightings,
  type RequestVerdict,
} from '../../dataplane/decisions/index.js';
import { replayRequest } from './replay.js';

/** One workload's recent traffic, and the decisions of its proxy now and with the change. */
export interface WorkloadReplay {
  /** `<pod>.<namespace>`. */
  readonly workload: string;
  readonly entries: readonly RecordedSightings[];
  readonly current: ProxyDecisions;
  readonly proposed: ProxyDecisions;
  /** Headers the proposed config reads that the current one does not (the record kept none of them). */
  readonly unreadHeaders: readonly string[];
}

/** Requests of one kind whose verdict the change turns. */
export interface VerdictChange {
  readonly source: string;
  readonly destination: string;
  readonly method: string;
  readonly path: string;
  readonly from: RequestVerdict;
  readonly to: RequestVerdict;
  readonly calls: number;
  readonly lastSeen: string;
}

export interface VerdictReport {
  readonly workloads: readonly string[];
  /** Distinct recorded requests replayed, and the calls they stand for. */
  readonly replayed: { readonly kinds: number; readonly calls: number };
  readonly changes: readonly VerdictChange[];
  /** What the replay could not know, in words. */
  readonly caveats: readonly string[];
}

/** Who sent a recorded request, in words: its identity, or plain text from its address. */
export type SourceNamer = (entry: RecordedSightings) => string;

export const describeSourceBy =
  (podByAddress: ReadonlyMap<string, string>): SourceNamer =>
  (entry) => {
    const identity = entry.connection.peerUriSans?.[0];
    if (identity !== undefined) return identity;
    const pod = podByAddress.get(entry.connection.sourceAddress);
    return `plaintext ${entry.connection.sourceAddress}${pod ? ` (${pod})` : ''}`;
  };

/**
 * Replays every recorded request of each workload through its proxy's decisions now and with the
 * change, and groups the requests whose verdict turns by source, destination, request and verdicts.
 */
export async function compareVerdicts(workloads: readonly WorkloadReplay[], sourceOf: SourceNamer): Promise<VerdictReport> {
  const groups = new Map<string, { change: VerdictChange; calls: number; lastSeen: string }>();
  const caveats: string[] = [];
  let kinds = 0;
  let calls = 0;
  for (const workload of workloads) {
    let stale = 0;
    let unverified = 0;
    for (const entry of workload.entries) {
      kinds++;
      calls += entry.count;
      const at = new Date(entry.lastSeen);
      const [now, next] = await Promise.all([replayRequest(workload.current, entry, at), replayRequest(workload.proposed, entry, at)]);
      if (!sameVerdict(now, entry.verdict)) stale++;
      if (sameVerdict(now, next)) continue;
      if (entry.tokens?.some((token) => token.verified !== true && token.failure === undefined)) unverified++;
      const destination = `${workload.workload}:${entry.connection.destinationPort}`;
      const change: VerdictChange = {
        source: sourceOf(entry),
        destination,
        method: entry.request.method,
        path: entry.request.path,
        from: now,
        to: next,
        calls: 0,
        lastSeen: entry.lastSeen,
      };
      const key = JSON.stringify([change.source, destination, change.method, change.path, now, next]);
      const group = groups.get(key) ?? { change, calls: 0, lastSeen: entry.lastSeen };
      group.calls += entry.count;
      if (entry.lastSeen > group.lastSeen) group.lastSeen = entry.lastSeen;
      groups.set(key, group);
    }
    if (stale > 0)
      caveats.push(
        `${workload.workload}: ${stale} recorded kind(s) of request replay to another verdict than they got: the config changed since, or an external authorizer answered them`,
      );
    if (unverified > 0) caveats.push(`${workload.workload}: ${unverified} changed kind(s) carried tokens whose signature the proxy never checked`);
    if (workload.unreadHeaders.length > 0)
      caveats.push(
        `${workload.workload}: the change reads headers the record did not keep (${workload.unreadHeaders.join(', ')}): requests are replayed without them`,
      );
  }
  const changes = [...groups.values()]
    .map((group) => ({ ...group.change, calls: group.calls, lastSeen: group.lastSeen }))
    .sort((a, b) => b.calls - a.calls || a.destination.localeCompare(b.destination) || a.source.localeCompare(b.source) || a.path.localeCompare(b.path));
  return { workloads: workloads.map((workload) => workload.workload), replayed: { kinds, calls }, changes, caveats };
}

/** The headers a proposed config's policies name that the current one's do not: the record kept none of them. */
export function newlyReadHeaders(current: ProxyResources, proposed: ProxyResources): string[] {
  const now = policyReadable(current).headers;
  return [...policyReadable(proposed).headers].filter((name) => !now.has(name) && !name.startsWith(':')).sort();
}
