/**
 * The mesh's standard request metrics as the data plane reports them on 15090: counters and
 * histograms keyed by a bounded label set, rendered in the Prometheus text format.
 */

/** The labels of every request metric, in the order they are printed. */
export const REQUEST_LABELS = [
  'reporter',
  'source_workload',
  'source_workload_namespace',
  'source_principal',
  'source_app',
  'source_version',
  'source_cluster',
  'destination_workload',
  'destination_workload_namespace',
  'destination_principal',
  'destination_app',
  'destination_version',
  'destination_service',
  'destination_service_name',
  'destination_service_namespace',
  'destination_cluster',
  'request_protocol',
  'response_code',
  'grpc_response_status',
  'response_flags',
  'connection_security_policy',
] as const;

export type RequestLabelName = (typeof REQUEST_LABELS)[number];
export type RequestLabels = Readonly<Record<RequestLabelName, string>>;
/** TCP metrics carry the same labels but the response code and gRPC status. */
export type TcpLabels = Omit<RequestLabels, 'response_code' | 'grpc_response_status'>;

export const REQUEST_METRICS = {
  requests: 'mesh_requests_total',
  duration: 'mesh_request_duration_milliseconds',
  requestBytes: 'mesh_request_bytes',
  responseBytes: 'mesh_response_bytes',
  tcpSent: 'mesh_tcp_sent_bytes_total',
  tcpReceived: 'mesh_tcp_received_bytes_total',
  tcpOpened: 'mesh_tcp_connections_opened_total',
  tcpClosed: 'mesh_tcp_connections_closed_total',
} as const;

/** The reference's default buckets: milliseconds for durations, bytes for sizes. */
export const DURATION_BUCKETS_MS = [0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 600000, 1800000, 3600000] as const;
export const SIZE_BUCKETS_BYTES = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000] as const;

/** Label sets kept per metric; beyond it new series are dropped (and counted), never the process's memory. */
export const MAX_SERIES = 10_000;

interface Histogram {
  /** Observations per interval: `buckets[i]` counts values in (bounds[i-1], bounds[i]], the last one those above every bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

export interface MeshMetrics {
  /** One finished HTTP request: the counter, the duration and both sizes. */
  recordRequest(labels: RequestLabels, durationMs: number, requestBytes: number, responseBytes: number): void;
  tcpOpened(labels: TcpLabels): void;
  tcpClosed(labels: TcpLabels): void;
  tcpBytes(labels: TcpLabels, received: number, sent: number): void;
  /** Series refused because a metric already held MAX_SERIES label sets. */
  droppedSeries(): number;
  prometheus(): string;
}

const NEEDS_ESCAPE = /[\\\n"]/;

function escapeValue(value: string): string {
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** A label set as the text between the braces: the series' key, computed once per recorded event. */
function labelText(labels: Readonly<Record<string, string>>): string {
  let text = '';
  for (const name in labels) text += `${text === '' ? '' : ','}${name}="${escapeValue(labels[name] as string)}"`;
  return text;
}

/** The first bucket a value falls in (buckets hold counts per interval; the text sums them). */
function bucketOf(bounds: readonly number[], value: number): number {
  let index = 0;
  while (index < bounds.length && !(value <= (bounds[index] as number))) index++;
  return index;
}

export function newMeshMetrics(maxSeries = MAX_SERIES): MeshMetrics {
  // A label set recorded again (the request telemetry reuses its label objects) keeps its text.
  const texts = new WeakMap<object, string>();
  const seriesKey = (labels: Readonly<Record<string, string>>): string => {
    let text = texts.get(labels);
    if (text === undefined) texts.set(labels, (text = labelText(labels)));
    return text;
  };
  const counters = new Map<string, Map<string, number>>();
  const histograms = new Map<string, Map<string, Histogram>>();
  let dropped = 0;
  const seriesOf = <T>(families: Map<string, Map<string, T>>, name: string): Map<string, T> => {
    let series = families.get(name);
    if (!series) families.set(name, (series = new Map()));
    return series;
  };
  const add = (name: string, key: string, by: number): void => {
    const series = seriesOf(counters, name);
    const current = series.get(key);
    if (current === undefined && series.size >= maxSeries) return void dropped++;
    series.set(key, (current ?? 0) + by);
  };
  const observe = (name: string, bounds: readonly number[], key: string, value: number): void => {
    const series = seriesOf(histograms, name);
    let histogram = series.get(key);
    if (!histogram) {
      if (series.size >= maxSeries) return void dropped++;
      // One more bucket than bounds: values above the last bound (+Inf).
      series.set(key, (histogram = { buckets: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 }));
    }
    const index = bucketOf(bounds, value);
    histogram.buckets[index] = (histogram.buckets[index] as number) + 1;
    histogram.sum += value;
    histogram.count += 1;
  };
  const boundsOf = (name: string): readonly number[] => (name === REQUEST_METRICS.duration ? DURATION_BUCKETS_MS : SIZE_BUCKETS_BYTES);
  return {
    recordRequest(labels, durationMs, requestBytes, responseBytes) {
      const key = seriesKey(labels);
      add(REQUEST_METRICS.requests, key, 1);
      observe(REQUEST_METRICS.duration, DURATION_BUCKETS_MS, key, durationMs);
      observe(REQUEST_METRICS.requestBytes, SIZE_BUCKETS_BYTES, key, requestBytes);
      observe(REQUEST_METRICS.responseBytes, SIZE_BUCKETS_BYTES, key, responseBytes);
    },
    tcpOpened: (labels) => add(REQUEST_METRICS.tcpOpened, seriesKey(labels), 1),
    tcpClosed: (labels) => add(REQUEST_METRICS.tcpClosed, seriesKey(labels), 1),
    tcpBytes(labels, received, sent) {
      if (received > 0) add(REQUEST_METRICS.tcpReceived, seriesKey(labels), received);
      if (sent > 0) add(REQUEST_METRICS.tcpSent, seriesKey(labels), sent);
    },
    droppedSeries: () => dropped,
    prometheus() {
      const lines: string[] = [];
      for (const [name, series] of [...counters].sort(([a], [b]) => (a < b ? -1 : 1))) {
        lines.push(`# TYPE ${name} counter`);
        for (const [labels, value] of series) lines.push(`${name}{${labels}} ${value}`);
      }
      for (const [name, series] of [...histograms].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const bounds = boundsOf(name);
        lines.push(`# TYPE ${name} histogram`);
        for (const [labels, histogram] of series) {
          let cumulative = 0;
          bounds.forEach((bound, index) => lines.push(`${name}_bucket{${labels},le="${bound}"} ${(cumulative += histogram.buckets[index] ?? 0)}`));
          lines.push(
            `${name}_bucket{${labels},le="+Inf"} ${histogram.count}`,
            `${name}_sum{${labels}} ${histogram.sum}`,
            `${name}_count{${labels}} ${histogram.count}`,
          );
        }
      }
      return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    },
  };
}
