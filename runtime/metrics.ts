import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { MeshError } from './errors.js';
import { metricsFor, type CounterName, type GaugeName, type HistogramName, type LabelNameOf, type MetricSpec, type PromMetricType } from './metrics-catalog.js';
import type { Program } from './settings-info.js';

/**
 * One process's metrics: its own prom-client registry (never the library's global one) holding
 * every catalogue metric of the program plus the Node.js process metrics. The accessors accept
 * only names of the right kind for the program, so a typo does not compile.
 */
export interface MeshMetrics<P extends Program = Program> {
  readonly program: P;
  readonly registry: Registry;
  counter<N extends CounterName<P>>(name: N): Counter<LabelNameOf<N>>;
  gauge<N extends GaugeName<P>>(name: N): Gauge<LabelNameOf<N>>;
  histogram<N extends HistogramName<P>>(name: N): Histogram<LabelNameOf<N>>;
}

export function newMetrics<P extends Program>(program: P): MeshMetrics<P> {
  const registry = new Registry();
  const byName = new Map<string, { spec: MetricSpec; metric: Counter | Gauge | Histogram }>();
  for (const spec of metricsFor(program)) {
    byName.set(spec.name, { spec, metric: createMetric(spec, registry) });
  }
  collectDefaultMetrics({ register: registry });

  const lookup = (name: string, type: PromMetricType): Counter | Gauge | Histogram => {
    const entry = byName.get(name);
    if (!entry) {
      throw new MeshError('metric-not-registered', `metric ${name} is not registered for ${program}`);
    }
    if (entry.spec.type !== type) {
      throw new MeshError('metric-type-mismatch', `metric ${name} is a ${entry.spec.type}, not a ${type}`);
    }
    return entry.metric;
  };

  return {
    program,
    registry,
    counter: (name) => lookup(name, 'counter') as Counter<never>,
    gauge: (name) => lookup(name, 'gauge') as Gauge<never>,
    histogram: (name) => lookup(name, 'histogram') as Histogram<never>,
  };
}

function createMetric(spec: MetricSpec, registry: Registry): Counter | Gauge | Histogram {
  const common = { name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry] };
  switch (spec.type) {
    case 'counter':
      return new Counter(common);
    case 'gauge':
      return new Gauge(common);
    case 'histogram':
      return new Histogram({ ...common, buckets: [...(spec.buckets ?? [])] });
  }
}
