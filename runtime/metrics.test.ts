import { describe, expect, test } from '@jest/globals';
import { register as globalRegister } from 'prom-client';
import { describeWithSeeds, readSeed } from '../testing/seeds.js';
import { MeshError } from './errors.js';
import { METRIC_CATALOG, metricsFor, type SeedMetricType } from './metrics-catalog.js';
import { newMetrics } from './metrics.js';
import type { Program } from './settings-info.js';

const PROM_TYPE: Record<SeedMetricType, string> = {
  Sum: 'counter',
  Count: 'counter',
  LastValue: 'gauge',
  Distribution: 'histogram',
};
const PROGRAMS: readonly Program[] = ['pilot-discovery', 'pilot-agent', 'meshctl'];

type SeedMetrics = Map<string, SeedMetricType>;

/** `Sum: a, b (note), c and d.` → names with their seed type. */
function addNames(into: SeedMetrics, type: string, list: string): void {
  if (!(type in PROM_TYPE)) throw new Error(`unknown metric type "${type}" in the seed`);
  const names = list
    .replace(/\([^)]*\)/g, '')
    .replace(/\.\s*$/, '')
    .split(/,|\sand\s/)
    .map((name) => name.trim())
    .filter((name) => name !== '');
  for (const name of names) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`cannot parse metric name "${name}" in the seed`);
    into.set(name, type as SeedMetricType);
  }
}

/** The daemon and agent sets of document 2 (001_…): shared, daemon-only, agent-only. */
function parseProcessSeed(): { shared: SeedMetrics; daemon: SeedMetrics; agent: SeedMetrics } {
  const text = readSeed('daemon');
  const section = text.split('### Exported metrics')[1]?.split(/\n## /)[0];
  if (!section) throw new Error('no "Exported metrics" section in the daemon seed');
  const sets = { shared: new Map(), daemon: new Map(), agent: new Map() } as ReturnType<typeof parseProcessSeed>;
  let current: SeedMetrics | undefined;
  for (const line of section.split('\n')) {
    if (line.startsWith('Shared by the daemon and the agent')) current = sets.shared;
    else if (line.startsWith('Only the daemon')) current = sets.daemon;
    else if (line.startsWith('Only the agent')) current = sets.agent;
    const bullet = /^- (\w+): (.*)$/.exec(line);
    if (bullet) {
      if (!current) throw new Error(`metric list before any heading: ${line}`);
      addNames(current, bullet[1] ?? '', bullet[2] ?? '');
    }
  }
  return sets;
}

/** The operator's own list in document 3 (002_…). */
function parseOperatorSeed(): SeedMetrics {
  const text = readSeed('meshctl');
  const line = text.split('\n').find((l) => l.includes('operator metrics'));
  const lists = line?.split('plus):')[1];
  if (!lists) throw new Error('no operator metric list in the utility seed');
  const operator: SeedMetrics = new Map();
  for (const part of lists.split(';')) {
    const match = /^\s*(\w+):(.*)$/.exec(part);
    if (!match) throw new Error(`cannot parse operator metric list "${part}"`);
    addNames(operator, match[1] ?? '', match[2] ?? '');
  }
  return operator;
}

function expectedFor(program: Program): SeedMetrics {
  const { shared, daemon, agent } = parseProcessSeed();
  switch (program) {
    case 'pilot-discovery':
      return new Map([...shared, ...daemon]);
    case 'pilot-agent':
      return new Map([...shared, ...agent]);
    case 'meshctl':
      return new Map([...shared, ...daemon, ...parseOperatorSeed()]);
  }
}

describeWithSeeds('the seed metric lists', () => {
  test('parse into the expected number of metrics', () => {
    const { shared, daemon, agent } = parseProcessSeed();
    expect(shared.size).toBe(62);
    expect(daemon.size).toBe(29);
    expect(agent.size).toBe(18);
    expect(parseOperatorSeed().size).toBe(15);
  });
});

describeWithSeeds('newMetrics against the seed lists', () => {
  test.each(PROGRAMS)('%s: registers every seed metric under its exact name with the matching type', async (program) => {
    const expected = expectedFor(program);
    const metrics = newMetrics(program);
    const text = await metrics.registry.metrics();
    const missing = [...expected]
      .filter(([name, seedType]) => !text.includes(`# TYPE ${name} ${PROM_TYPE[seedType]}\n`))
      .map(([name, seedType]) => `${name} (${PROM_TYPE[seedType]})`);
    expect(missing).toEqual([]);
  });

  test.each(PROGRAMS)('%s: registers no catalogue metric the seeds do not list for the program', (program) => {
    const expected = expectedFor(program);
    const names = metricsFor(program)
      .filter((spec) => spec.beyondSeed !== true)
      .map((spec) => spec.name);
    expect(new Set(names)).toEqual(new Set(expected.keys()));
    expect(names.length).toBe(new Set(names).size);
  });
});

describe.each(PROGRAMS)('newMetrics(%s)', (program) => {
  const expected = new Set(metricsFor(program).map((spec) => spec.name));

  test('adds the Node.js process metrics on the same registry without clashing', async () => {
    const metrics = newMetrics(program);
    const names = (await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names).toContain('process_cpu_user_seconds_total');
    expect(names).toContain('nodejs_heap_size_total_bytes');
    const defaults = names.filter((name) => !expected.has(name));
    expect(defaults.every((name) => name.startsWith('process_') || name.startsWith('nodejs_'))).toBe(true);
    expect(names.length).toBe(expected.size + defaults.length);
  });

  test('histograms expose their buckets', async () => {
    const metrics = newMetrics(program);
    const histograms = metricsFor(program).filter((spec) => spec.type === 'histogram');
    expect(histograms.length).toBeGreaterThan(0);
    for (const spec of histograms) {
      const labels = Object.fromEntries(spec.labelNames.map((label) => [label, 'test']));
      (metrics.histogram as (name: string) => { observe(labels: object, value: number): void })(spec.name).observe(labels, 1);
    }
    const text = await metrics.registry.metrics();
    for (const spec of histograms) {
      const buckets = text.split('\n').filter((line) => line.startsWith(`${spec.name}_bucket{`));
      expect(buckets.length).toBe((spec.buckets?.length ?? 0) + 1);
      expect(buckets.at(-1)).toMatch(/le="\+Inf".* 1$/);
    }
  });
});

describe('the catalogue', () => {
  test('histogram buckets are ascending and fit the unit', () => {
    for (const spec of METRIC_CATALOG) {
      if (spec.type !== 'histogram') {
        expect('buckets' in spec).toBe(false);
        continue;
      }
      const buckets = [...spec.buckets];
      expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
      expect(new Set(buckets).size).toBe(buckets.length);
      switch (spec.unit) {
        case 'seconds':
          expect(buckets.at(-1)).toBeLessThanOrEqual(60);
          expect(buckets[0]).toBeLessThan(1);
          break;
        case 'milliseconds':
          expect(buckets[0]).toBe(1);
          expect(buckets.at(-1)).toBeGreaterThanOrEqual(10_000);
          break;
        case 'bytes':
          expect(buckets[0]).toBe(1);
          expect(buckets.at(-1)).toBe(10_000_000);
          break;
        case 'count':
          expect(buckets.every((bucket) => Number.isInteger(bucket))).toBe(true);
          break;
      }
    }
  });

  test('labels follow the reference and stay bounded', () => {
    const labelsOf = (name: string): readonly string[] | undefined => METRIC_CATALOG.find((spec) => spec.name === name)?.labelNames;
    expect(labelsOf('pilot_xds_pushes')).toEqual(['type']);
    expect(labelsOf('pilot_total_xds_rejects')).toEqual(['type']);
    expect(labelsOf('pilot_xds_config_size_bytes')).toEqual(['type']);
    expect(labelsOf('pilot_xds_push_time')).toEqual(['type']);
    expect(labelsOf('pilot_push_triggers')).toEqual(['type']);
    expect(labelsOf('pilot_total_rejected_configs')).toEqual(['type']);
    expect(labelsOf('pilot_xds')).toEqual(['version']);
    expect(labelsOf('mesh_build')).toEqual(['component', 'tag']);
    expect(labelsOf('pilot_xds_lds_reject')).toEqual([]);
    const unbounded = ['pod', 'node', 'proxy', 'proxy_id', 'err', 'name', 'message', 'namespace'];
    for (const spec of METRIC_CATALOG) {
      expect(spec.labelNames.filter((label) => unbounded.includes(label))).toEqual([]);
      expect(spec.help.toLowerCase()).not.toContain('istio');
    }
  });
});

describe('the accessors', () => {
  test('return the registered metric, whose values show in the output', async () => {
    const metrics = newMetrics('pilot-discovery');
    metrics.counter('pilot_xds_pushes').inc({ type: 'cds' });
    metrics.counter('ca_server_csr_count').inc(2);
    metrics.gauge('mesh_build').set({ component: 'pilot', tag: '0.1.0' }, 1);
    metrics.histogram('pilot_xds_push_time').observe({ type: 'lds' }, 0.2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('pilot_xds_pushes{type="cds"} 1\n');
    expect(text).toContain('ca_server_csr_count 2\n');
    expect(text).toContain('mesh_build{component="pilot",tag="0.1.0"} 1\n');
    expect(text).toContain('pilot_xds_push_time_bucket{le="0.5",type="lds"} 1\n');
  });

  test('reject a name of another kind or of another program', () => {
    const daemon = newMetrics('pilot-discovery');
    // @ts-expect-error a gauge is not a counter
    expect(() => daemon.counter('pilot_services')).toThrow(MeshError);
    // @ts-expect-error an agent-only metric is not registered in the daemon
    expect(() => daemon.counter('wasm_cache_lookup_count')).toThrow(/not registered for pilot-discovery/);
    const agent = newMetrics('pilot-agent');
    // @ts-expect-error a daemon-only metric is not registered in the agent
    expect(() => agent.counter('ca_server_csr_count')).toThrow(/not registered for pilot-agent/);
    // @ts-expect-error a typo does not compile
    expect(() => agent.gauge('pilot_service')).toThrow(MeshError);
  });

  test('keep each process registry separate from the others and from the global one', async () => {
    const first = newMetrics('pilot-agent');
    const second = newMetrics('pilot-agent');
    first.counter('total_pushes').inc(3);
    expect(await first.registry.getSingleMetricAsString('total_pushes')).toContain('total_pushes 3');
    expect(await second.registry.getSingleMetricAsString('total_pushes')).toContain('total_pushes 0');
    expect(globalRegister.getSingleMetric('total_pushes')).toBeUndefined();
  });
});
