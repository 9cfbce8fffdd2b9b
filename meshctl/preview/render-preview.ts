import type { RequestVerdict } from '../../dataplane/decisions/index.js';
import { formatTable } from '../kube/table.js';
import type { VerdictChange, VerdictReport } from './verdict-changes.js';

/** The exit status of `x authz preview` when some recorded request would get another verdict. */
export const VERDICTS_WOULD_CHANGE = 3;

/** A verdict in a word: allowed, the status of a local reply, or reset. */
export function verdictWord(verdict: RequestVerdict): string {
  if (verdict.outcome === 'forwarded') return 'allowed';
  if (verdict.outcome === 'reset') return 'reset';
  return String(verdict.status ?? '');
}

/** What turns the verdict: the policy or filter that now denies, or the one that no longer does. */
export function becauseOf(change: Pick<VerdictChange, 'from' | 'to'>): string {
  const named = (verdict: RequestVerdict): string => verdict.policy ?? verdict.by ?? verdictWord(verdict);
  if (change.to.outcome === 'forwarded') return `no longer ${named(change.from)}`;
  return named(change.to);
}

/** The report as a table of the changes, with what the replay could not know below it. */
export function renderPreview(report: VerdictReport): string {
  const lines = [
    report.workloads.length === 0
      ? 'No workload with a sidecar is selected by the change.'
      : `Replayed ${report.replayed.kinds} kinds of recorded request (${report.replayed.calls} calls) at ${report.workloads.join(', ')}.`,
  ];
  if (report.changes.length === 0) lines.push('No recorded request would change verdict.');
  else {
    lines.push(`${report.changes.length} ${report.changes.length === 1 ? 'kind' : 'kinds'} of request would change verdict:`, '');
    const rows = report.changes.map((change) => [
      `${verdictWord(change.from)} → ${verdictWord(change.to)}`,
      change.source,
      change.destination,
      `${change.method} ${change.path}`,
      String(change.calls),
      change.lastSeen,
      becauseOf(change),
    ]);
    lines.push(formatTable([['CHANGE', 'SOURCE', 'DESTINATION', 'REQUEST', 'CALLS', 'LAST SEEN', 'BECAUSE'], ...rows], 3).trimEnd());
  }
  for (const caveat of report.caveats) lines.push(`Note: ${caveat}`);
  return `${lines.join('\n')}\n`;
}
