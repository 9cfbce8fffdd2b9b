import { LOG_LEVELS, type LogLevel } from './logger.js';

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * True when an entry at `level` passes `threshold`. `none` as a threshold passes nothing, and
 * no entry is ever at `none`.
 */
export function isAtOrAbove(level: LogLevel, threshold: LogLevel): boolean {
  if (level === 'none' || threshold === 'none') return false;
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}
