import type { ServerResponse } from 'node:http';
import type { Clock } from '../runtime/index.js';
import type { PodTargets, PodView } from './pod-target.js';
import { badRequest } from './status-error.js';

/** One line a container wrote, with when it wrote it. */
export interface PodLogLine {
  /** Milliseconds since the epoch. */
  time: number;
  text: string;
}

/**
 * A container's output so far (the double has no kubelet): plain text, whose lines count as
 * written when the pod started, or lines with their times. `undefined` is an empty log.
 */
export type PodLogSource = (namespace: string, pod: string, container: string) => string | readonly PodLogLine[] | undefined;

export interface PodLogDeps {
  pods: PodTargets;
  clock: Clock;
  source: PodLogSource | undefined;
  /** How often a `follow` request looks for new output. */
  followIntervalMs: number;
}

/** GET pods/<name>/log: the options of `PodLogOptions`, written as the kubelet writes them. */
export async function servePodLog(deps: PodLogDeps, namespace: string, name: string, query: URLSearchParams, res: ServerResponse): Promise<void> {
  const pod = deps.pods.get(namespace, name);
  const container = chooseContainer(pod, query.get('container') ?? '');
  const options = logOptions(query, deps.clock.now());
  if (query.get('previous') === 'true') throw badRequest(`previous terminated container "${container}" in pod "${name}" not found`);
  const unscheduled = pod.nodeName === '' && pod.phase === 'Pending';
  if (pod.phase === 'Pending' && !unscheduled) throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
  // A pod no node took has no log yet: the API server answers an empty body.
  if (unscheduled) return void res.end();
  const read = (): PodLogLine[] => linesOf(deps.source?.(namespace, name, container), pod);
  let lines = read();
  let sent = lines.length;
  let budget = options.limitBytes ?? Infinity;
  const write = (chosen: PodLogLine[]): boolean => {
    for (const line of chosen) {
      const text = `${options.timestamps ? `${nanoTimestamp(line.time)} ` : ''}${line.text}\n`;
      const bytes = Buffer.from(text);
      if (bytes.length >= budget) {
        res.write(bytes.subarray(0, budget));
        budget = 0;
        return false;
      }
      budget -= bytes.length;
      res.write(bytes);
    }
    return true;
  };
  let chosen = lines.filter((l) => options.since === undefined || l.time >= options.since);
  if (options.tailLines !== undefined) chosen = options.tailLines === 0 ? [] : chosen.slice(-options.tailLines);
  let more = write(chosen);
  while (more && options.follow && !res.destroyed && deps.pods.exists(namespace, name)) {
    await deps.clock.sleep(deps.followIntervalMs);
    lines = read();
    if (lines.length > sent) more = write(lines.slice(sent));
    sent = lines.length;
  }
  res.end();
}

/** The kubelet's rule: the named container, else the only one. */
function chooseContainer(pod: PodView, asked: string): string {
  if (asked !== '') {
    if (!pod.containers.includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${pod.name}`);
    return asked;
  }
  if (pod.containers.length === 1) return pod.containers[0] as string;
  if (pod.containers.length === 0) throw badRequest(`a container name must be specified for pod ${pod.name}`);
  throw badRequest(`a container name must be specified for pod ${pod.name}, choose one of: [${pod.containers.join(' ')}]`);
}

interface LogOptions {
  since?: number;
  tailLines?: number;
  limitBytes?: number;
  timestamps: boolean;
  follow: boolean;
}

function logOptions(query: URLSearchParams, now: number): LogOptions {
  const integer = (key: string, min: number): number | undefined => {
    const raw = query.get(key);
    if (raw === null || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw badRequest(`PodLogOptions is invalid: ${key}: Invalid value: ${raw}: must be ${min === 0 ? 'greater than or equal to 0' : 'greater than 0'}`);
    return value;
  };
  const sinceSeconds = integer('sinceSeconds', 1);
  const sinceTime = query.get('sinceTime');
  if (sinceSeconds !== undefined && sinceTime)
    throw badRequest('PodLogOptions is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
  let since = sinceSeconds !== undefined ? now - sinceSeconds * 1000 : undefined;
  if (sinceTime) {
    since = Date.parse(sinceTime);
    if (Number.isNaN(since)) throw badRequest(`parsing time "${sinceTime}" as "2006-01-02T15:04:05Z07:00": cannot parse`);
  }
  const tailLines = integer('tailLines', 0);
  const limitBytes = integer('limitBytes', 1);
  return {
    ...(since !== undefined ? { since } : {}),
    ...(tailLines !== undefined ? { tailLines } : {}),
    ...(limitBytes !== undefined ? { limitBytes } : {}),
    timestamps: query.get('timestamps') === 'true',
    follow: query.get('follow') === 'true',
  };
}

function linesOf(output: string | readonly PodLogLine[] | undefined, pod: PodView): PodLogLine[] {
  if (output === undefined) return [];
  if (typeof output !== 'string') return [...output];
  const created = pod.object.metadata?.creationTimestamp;
  const started = Date.parse(pod.startTime ?? (created instanceof Date ? created.toISOString() : (created ?? ''))) || 0;
  const texts = output.split('\n');
  if (texts[texts.length - 1] === '') texts.pop();
  return texts.map((text) => ({ time: started, text }));
}

/** RFC 3339 with nanoseconds, as the kubelet prefixes lines for `timestamps=true`. */
function nanoTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}
