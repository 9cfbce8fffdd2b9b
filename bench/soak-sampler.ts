/**
 * What the soak reads from the processes it watches: resident memory and open file descriptors
 * from /proc, and, where a process serves Prometheus metrics, its V8 heap and active handles
 * (prom-client's default metrics). Also the slope of a series by least squares.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessSample {
  readonly rssBytes?: number;
  readonly fds?: number;
  readonly heapUsedBytes?: number;
  /** Memory of Buffers and other objects outside the V8 heap (prom-client's `nodejs_external_memory_bytes`). */
  readonly externalBytes?: number;
  readonly activeHandles?: number;
}

/** A parsed Prometheus text: every sample's value, keyed by metric name, with its labels. */
export type PromSamples = Map<string, { labels: Record<string, string>; value: number }[]>;

export function parsePrometheus(text: string): PromSamples {
  const samples: PromSamples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1] as string] = label[2] as string;
    const list = samples.get(match[1] as string) ?? [];
    list.push({ labels, value: Number(match[3]) });
    samples.set(match[1] as string, list);
  }
  return samples;
}

/** The sum of a metric's samples, optionally by one label's value. */
export function sumOf(samples: PromSamples, name: string): number | undefined {
  const list = samples.get(name);
  return list ? list.reduce((sum, sample) => sum + sample.value, 0) : undefined;
}

export function byLabel(samples: PromSamples, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sample of samples.get(name) ?? []) {
    const key = sample.labels[label] ?? '';
    out[key] = (out[key] ?? 0) + sample.value;
  }
  return out;
}

export async function scrape(url: string): Promise<PromSamples | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return response.status === 200 ? parsePrometheus(await response.text()) : undefined;
  } catch {
    return undefined;
  }
}

/** RSS and descriptor count of a process from /proc; empty when it is gone. */
export function procSample(pid: number): Pick<ProcessSample, 'rssBytes' | 'fds'> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
    return { rssBytes: rssKb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return {};
  }
}

/** The children of a process (the data plane an agent supervises). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function heapAndHandles(samples: PromSamples | undefined): Pick<ProcessSample, 'heapUsedBytes' | 'externalBytes' | 'activeHandles'> {
  if (!samples) return {};
  const heap = sumOf(samples, 'nodejs_heap_size_used_bytes') ?? sumOf(samples, 'envoy_server_memory_allocated');
  const external = sumOf(samples, 'nodejs_external_memory_bytes');
  const handles = sumOf(samples, 'nodejs_active_handles_total');
  return {
    ...(heap !== undefined ? { heapUsedBytes: heap } : {}),
    ...(external !== undefined ? { externalBytes: external } : {}),
    ...(handles !== undefined ? { activeHandles: handles } : {}),
  };
}

/** Least-squares slope of y over x; undefined with fewer than 3 points. */
export function slope(points: readonly { x: number; y: number }[]): number | undefined {
  if (points.length < 3) return undefined;
  const n = points.length;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const point of points) {
    num += (point.x - meanX) * (point.y - meanY);
    den += (point.x - meanX) ** 2;
  }
  return den === 0 ? undefined : num / den;
}
