/** Test support: reads Prometheus text exposition (what 15090 serves) into samples. */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL))
      labels[name as string] = (value as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include every pair of `where`. */
export function samplesOf(samples: readonly Sample[], name: string, where: Readonly<Record<string, string>> = {}): Sample[] {
  return samples.filter((sample) => sample.name === name && Object.entries(where).every(([key, value]) => sample.labels[key] === value));
}

/** The sum of the values of `samplesOf(...)`. */
export function sumOf(samples: readonly Sample[], name: string, where: Readonly<Record<string, string>> = {}): number {
  return samplesOf(samples, name, where).reduce((total, sample) => total + sample.value, 0);
}
