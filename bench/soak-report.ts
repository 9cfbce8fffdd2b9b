/**
 * The soak's figures: a series per watched process (RSS, heap, handles, descriptors), the slopes
 * after warm-up, and the text printed per interval and at the end.
 */
import { slope, type ProcessSample } from './soak-sampler.js';

export interface Point extends ProcessSample {
  /** Minutes since the soak started. */
  readonly minute: number;
}

const MB = 1024 * 1024;
const NAME = 38;
const fixed = (value: number | undefined, digits = 1): string => (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits));
const mb = (bytes: number | undefined): string => fixed(bytes === undefined ? undefined : bytes / MB);
const signed = (value: number | undefined, digits = 2): string => (value === undefined ? '-' : `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`);

export function newSeries(): { add(name: string, point: Point): void; names(): string[]; of(name: string): readonly Point[] } {
  const series = new Map<string, Point[]>();
  return {
    add(name, point) {
      const list = series.get(name) ?? [];
      list.push(point);
      series.set(name, list);
    },
    names: () => [...series.keys()],
    of: (name) => series.get(name) ?? [],
  };
}

export function processTable(rows: readonly { name: string; sample: ProcessSample }[]): string {
  const lines = [
    `  ${'process'.padEnd(NAME)} ${'RSS MB'.padStart(8)} ${'heap MB'.padStart(8)} ${'ext MB'.padStart(7)} ${'handles'.padStart(8)} ${'fds'.padStart(6)}`,
  ];
  for (const { name, sample } of rows) {
    lines.push(
      `  ${name.padEnd(NAME)} ${mb(sample.rssBytes).padStart(8)} ${mb(sample.heapUsedBytes).padStart(8)} ${mb(sample.externalBytes).padStart(7)} ${fixed(sample.activeHandles, 0).padStart(8)} ${fixed(sample.fds, 0).padStart(6)}`,
    );
  }
  return lines.join('\n');
}

/** Slope in units per minute of one field over the points after warm-up. */
function slopeOf(points: readonly Point[], warmupMinutes: number, field: keyof ProcessSample, scale: number): number | undefined {
  const after = points
    .filter((point) => point.minute >= warmupMinutes && point[field] !== undefined)
    .map((point) => ({ x: point.minute, y: (point[field] as number) / scale }));
  return slope(after);
}

function firstLast(points: readonly Point[], field: keyof ProcessSample, scale: number, digits: number): string {
  const values = points.map((point) => point[field]).filter((value): value is number => value !== undefined);
  if (values.length === 0) return '-';
  const first = values[0] as number;
  const last = values[values.length - 1] as number;
  return `${fixed(first / scale, digits)}→${fixed(last / scale, digits)} (max ${fixed(Math.max(...values) / scale, digits)})`;
}

export function summaryTable(series: ReturnType<typeof newSeries>, warmupMinutes: number): string {
  const lines = [
    `  ${'process'.padEnd(NAME)} ${'RSS MB/min'.padStart(10)} ${'heap MB/min'.padStart(11)} ${'ext MB/min'.padStart(10)}  ${'RSS MB first→last (max)'.padEnd(26)} ${'heap MB first→last (max)'.padEnd(26)} ${'handles first→last (max)'.padEnd(24)} fds first→last (max)`,
  ];
  for (const name of series.names()) {
    const points = series.of(name);
    lines.push(
      `  ${name.padEnd(NAME)} ${signed(slopeOf(points, warmupMinutes, 'rssBytes', MB)).padStart(10)} ${signed(slopeOf(points, warmupMinutes, 'heapUsedBytes', MB)).padStart(11)} ${signed(slopeOf(points, warmupMinutes, 'externalBytes', MB)).padStart(10)}  ${firstLast(points, 'rssBytes', MB, 1).padEnd(26)} ${firstLast(points, 'heapUsedBytes', MB, 1).padEnd(26)} ${firstLast(points, 'activeHandles', 1, 0).padEnd(24)} ${firstLast(points, 'fds', 1, 0)}`,
    );
  }
  return lines.join('\n');
}

export function clock(minutes: number): string {
  const seconds = Math.round(minutes * 60);
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
}

export function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).filter(([, value]) => value !== 0);
  return entries.length === 0 ? '0' : entries.map(([key, value]) => `${key} ${value}`).join(', ');
}

export function delta(now: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(now)) out[key] = value - (before[key] ?? 0);
  return out;
}
