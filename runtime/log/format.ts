import { types } from 'node:util';
import type { LogFields, LogLevel } from './logger.js';
import { DEFAULT_SCOPE } from './scopes.js';

/** One log entry, ready to encode. */
export interface LogEntry {
  /** Milliseconds since the epoch (fractions give microseconds). */
  timeMs: number;
  level: Exclude<LogLevel, 'none'>;
  scope: string;
  message: string;
  fields: LogFields;
  /** `dir/file.ts:42`, when caller info is on for the scope. */
  caller?: string;
  /** The call stack, when the entry is at or above the scope's stack-trace level. */
  stack?: string;
}

/** UTC with microseconds, as the reference prints it: `2026-11-22T06:43:26.123456Z`. */
export function formatTimestamp(timeMs: number): string {
  const wholeMs = Math.floor(timeMs);
  const extraMicros = Math.min(999, Math.round((timeMs - wholeMs) * 1000));
  const iso = new Date(wholeMs).toISOString();
  const micros = (wholeMs - Math.floor(wholeMs / 1000) * 1000) * 1000 + extraMicros;
  return `${iso.slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;
}

/**
 * The console format: time, level, scope (left out for `default`), caller, message and the
 * fields as `key=value`, tab-separated; a captured stack follows on the next lines.
 */
export function formatConsole(entry: LogEntry): string {
  const columns = [formatTimestamp(entry.timeMs), entry.level];
  if (entry.scope !== DEFAULT_SCOPE) columns.push(entry.scope);
  if (entry.caller !== undefined) columns.push(entry.caller);
  columns.push(entry.message);
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(entry.fields)) {
    if (value === undefined) continue;
    pairs.push(`${key}=${consoleValue(value)}`);
  }
  if (pairs.length > 0) columns.push(pairs.join(' '));
  const line = columns.join('\t');
  return entry.stack === undefined ? `${line}\n` : `${line}\n${entry.stack}\n`;
}

const ENTRY_KEYS = new Set(['time', 'level', 'scope', 'msg', 'caller', 'stack']);

/**
 * The JSON format: one object per line. A field named like an entry key is written as
 * `fields.<key>` so it cannot hide the entry's own value. With a captured stack, an Error field
 * also gets its own stack as `<key>Stack`.
 */
export function formatJson(entry: LogEntry): string {
  const out: Record<string, unknown> = { time: formatTimestamp(entry.timeMs), level: entry.level };
  if (entry.scope !== DEFAULT_SCOPE) out['scope'] = entry.scope;
  out['msg'] = entry.message;
  for (const [key, value] of Object.entries(entry.fields)) {
    if (value === undefined) continue;
    const name = ENTRY_KEYS.has(key) ? `fields.${key}` : key;
    out[name] = jsonValue(value);
    if (isError(value) && entry.stack !== undefined && value.stack !== undefined) {
      out[`${name}Stack`] = value.stack;
    }
  }
  if (entry.caller !== undefined) out['caller'] = entry.caller;
  if (entry.stack !== undefined) out['stack'] = entry.stack;
  try {
    return `${JSON.stringify(out, replacer)}\n`;
  } catch {
    // A circular field: keep the entry, lose only that field's value.
    for (const [key, value] of Object.entries(out)) {
      if (stringify(value) === undefined) out[key] = '[unserializable]';
    }
    return `${JSON.stringify(out, replacer)}\n`;
  }
}

function replacer(_key: string, value: unknown): unknown {
  return jsonValue(value);
}

function jsonValue(value: unknown): unknown {
  if (isError(value)) return value.message;
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** JSON text, or undefined when the value cannot be serialized (a cycle). */
function stringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, replacer) ?? 'null';
  } catch {
    return undefined;
  }
}

function consoleValue(value: unknown): string {
  if (isError(value)) return quoteIfNeeded(value.message);
  if (typeof value === 'string') return quoteIfNeeded(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'invalid-date' : value.toISOString();
  if (typeof value === 'function' || typeof value === 'symbol') return quoteIfNeeded(String(value));
  const json = stringify(value) ?? '[unserializable]';
  return /\s/.test(json) ? JSON.stringify(json) : json;
}

function quoteIfNeeded(text: string): string {
  // Control characters are what must be quoted.
  // eslint-disable-next-line no-control-regex
  return text === '' || /[\s"=\u0000-\u001f\u007f]/.test(text) ? JSON.stringify(text) : text;
}

/** Errors from another realm (a VM context, a worker) fail `instanceof Error`; they are still errors. */
function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}
