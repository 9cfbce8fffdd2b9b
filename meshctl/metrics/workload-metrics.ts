import { UsageError } from '../../runtime/index.js';

/**
 * `meshctl x metrics`: what it asks the metrics add-on for one workload, server side
 * (reporter="destination") over one minute, and the reference's table.
 */

/** A workload as the command names it: `<name>[.<namespace>]`; no namespace matches any. */
export interface WorkloadTarget {
  readonly name: string;
  readonly namespace?: string;
}

export interface WorkloadMetrics {
  readonly workload: string;
  readonly totalRps: number;
  readonly errorRps: number;
  /** Milliseconds; NaN when the histogram has no samples in the window. */
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
}

export const METRICS_WINDOW = '1m';
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Parses `<name>[.<namespace>]`; anything else is a usage error (the names end up in PromQL). */
export function parseWorkloadTarget(text: string): WorkloadTarget {
  const [name = '', namespace, ...rest] = text.split('.');
  if (rest.length > 0 || !NAME.test(name) || (namespace !== undefined && !NAME.test(namespace))) {
    throw new UsageError(`invalid workload ${JSON.stringify(text)}: expected <name>[.<namespace>] (lower-case DNS labels)`, { exitCode: 64 });
  }
  return namespace === undefined ? { name } : { name, namespace };
}

function selector(target: WorkloadTarget, extra = ''): string {
  const namespace = target.namespace === undefined ? '' : `,destination_workload_namespace="${target.namespace}"`;
  return `{destination_workload="${target.name}"${namespace},reporter="destination"${extra}}`;
}

/** The PromQL of each column. */
export function metricsQueries(target: WorkloadTarget, window = METRICS_WINDOW): Record<'totalRps' | 'errorRps' | 'p50Ms' | 'p90Ms' | 'p99Ms', string> {
  const latency = (quantile: number): string =>
    `histogram_quantile(${quantile}, sum(rate(mesh_request_duration_milliseconds_bucket${selector(target)}[${window}])) by (le))`;
  return {
    totalRps: `sum(rate(mesh_requests_total${selector(target)}[${window}]))`,
    errorRps: `sum(rate(mesh_requests_total${selector(target, ',response_code=~"5.."')}[${window}]))`,
    p50Ms: latency(0.5),
    p90Ms: latency(0.9),
    p99Ms: latency(0.99),
  };
}

/**
 * A latency as Go prints a `time.Duration` of whole microseconds: `0s`, `450µs`, `21ms`,
 * `1.5ms`, `2.25s`, `1m30s`. No samples (NaN) prints `0s`.
 */
export function formatLatency(milliseconds: number): string {
  if (!Number.isFinite(milliseconds) || milliseconds <= 0) return '0s';
  const micros = Math.floor(milliseconds * 1000);
  if (micros === 0) return '0s';
  const trim = (value: number, digits: number): string => value.toFixed(digits).replace(/\.?0+$/, '');
  if (micros < 1000) return `${micros}µs`;
  if (micros < 1_000_000) return `${trim(micros / 1000, 3)}ms`;
  const seconds = micros / 1_000_000;
  if (seconds < 60) return `${trim(seconds, 6)}s`;
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = `${trim(seconds % 60, 6)}s`;
  return hours > 0 ? `${hours}h${minutes}m${rest}` : `${minutes}m${rest}`;
}

/** A line as the reference prints it: the workload right-aligned in 40, then cells right-aligned in at least 13 (tabwriter, padding 2). */
function line(cells: readonly string[]): string {
  const [first = '', ...rest] = cells;
  const cell = (text: string, min: number): string => text.padStart(Math.max(min, [...text].length + 2));
  return `${cell(first.padStart(40), 0)}${rest.map((text) => cell(text, 13)).join('')}\n`;
}

export function renderWorkloadMetrics(rows: readonly WorkloadMetrics[]): string {
  const header = line(['WORKLOAD', 'TOTAL RPS', 'ERROR RPS', 'P50 LATENCY', 'P90 LATENCY', 'P99 LATENCY']);
  return (
    header +
    rows
      .map((row) =>
        line([row.workload, row.totalRps.toFixed(3), row.errorRps.toFixed(3), formatLatency(row.p50Ms), formatLatency(row.p90Ms), formatLatency(row.p99Ms)]),
      )
      .join('')
  );
}
