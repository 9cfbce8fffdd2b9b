/** Envoy-style counters of the embedded data plane (`/stats` and `/stats/prometheus`). */
export interface DataPlaneStats {
  inc(name: string, by?: number): void;
  /** Moves a gauge (a value that goes up and down, such as checks in flight) by `delta`. */
  adjust(name: string, delta: number): void;
  /** A counter's or a gauge's value. */
  get(name: string): number;
  /** Counters and gauges, by name. */
  entries(): [string, number][];
  /** Prometheus text format, names prefixed `envoy_` with dots as underscores, then every attached source's. */
  prometheus(): string;
  /** Adds a source of Prometheus text (the mesh's request metrics) to `prometheus()`. */
  attach(source: { prometheus(): string }): void;
}

export function newDataPlaneStats(): DataPlaneStats {
  const counters = new Map<string, number>();
  const gauges = new Map<string, number>();
  const sources: { prometheus(): string }[] = [];
  const byName = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);
  return {
    inc(name, by = 1) {
      counters.set(name, (counters.get(name) ?? 0) + by);
    },
    adjust(name, delta) {
      gauges.set(name, (gauges.get(name) ?? 0) + delta);
    },
    get: (name) => counters.get(name) ?? gauges.get(name) ?? 0,
    entries: () => [...counters.entries(), ...gauges.entries()].sort(byName),
    prometheus() {
      const lines: string[] = [];
      const typed = [
        ...[...counters].map(([name, value]) => [name, value, 'counter'] as const),
        ...[...gauges].map(([name, value]) => [name, value, 'gauge'] as const),
      ];
      for (const [name, value, type] of typed.sort((a, b) => byName([a[0], 0], [b[0], 0]))) {
        const metric = `envoy_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`;
        lines.push(`# TYPE ${metric} ${type}`, `${metric} ${value}`);
      }
      return `${lines.join('\n')}\n${sources.map((source) => source.prometheus()).join('')}`;
    },
    attach: (source) => void sources.push(source),
  };
}

/**
 * Envoy's `server.memory_allocated` and `server.memory_heap_size` gauges for this process: the
 * V8 heap in use and reserved (with `memoryUsage` passed in, tests give fixed figures).
 */
export function processMemoryStats(memoryUsage: () => { heapUsed: number; heapTotal: number } = () => process.memoryUsage()): { prometheus(): string } {
  return {
    prometheus() {
      const { heapUsed, heapTotal } = memoryUsage();
      return `# TYPE envoy_server_memory_allocated gauge\nenvoy_server_memory_allocated ${heapUsed}\n# TYPE envoy_server_memory_heap_size gauge\nenvoy_server_memory_heap_size ${heapTotal}\n`;
    },
  };
}
