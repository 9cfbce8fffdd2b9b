import { globFound } from './selection.js';

export interface LogWindow {
  /** Lines written after this are dropped (the API server's `sinceTime` already cut the start). */
  readonly until: Date;
  readonly criticalErrs: readonly string[];
  readonly ignoreErrs: readonly string[];
}

export interface FilteredLog {
  /** The log as kept: `<RFC 3339 time> <line>` per line, as `kubectl logs --timestamps` prints it. */
  readonly text: string;
  readonly lines: number;
  /** Lines matching a `--critical-errs` glob and no `--ignore-errs` glob. */
  readonly criticalErrors: number;
  /** The first few of them, for the report's log. */
  readonly samples: readonly string[];
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) /;
const SAMPLES_KEPT = 3;

/**
 * A container's log (read with `timestamps=true`) cut to the window's end, with its critical
 * errors counted: a line counts when some critical glob is found in it and no ignore glob is.
 */
export function filterLog(raw: string, window: LogWindow): FilteredLog {
  const kept: string[] = [];
  const samples: string[] = [];
  let criticalErrors = 0;
  const until = window.until.getTime();
  for (const line of raw.split('\n')) {
    if (line === '') continue;
    const stamp = TIMESTAMP.exec(line);
    if (stamp && Date.parse(stamp[1] ?? '') > until) continue;
    kept.push(line);
    const text = stamp ? line.slice(stamp[0].length) : line;
    if (isCritical(text, window)) {
      criticalErrors++;
      if (samples.length < SAMPLES_KEPT) samples.push(text);
    }
  }
  return { text: kept.length > 0 ? `${kept.join('\n')}\n` : '', lines: kept.length, criticalErrors, samples };
}

export function isCritical(text: string, window: Pick<LogWindow, 'criticalErrs' | 'ignoreErrs'>): boolean {
  if (!window.criticalErrs.some((glob) => globFound(glob, text))) return false;
  return !window.ignoreErrs.some((glob) => globFound(glob, text));
}
