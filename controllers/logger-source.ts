import type { Logger } from '../runtime/index.js';

/** A process's logging (which hands out a logger per scope) or one logger for everything. */
export type LoggerSource = Logger | { scope(name: string): Logger };

/** The logger of scope `name`: from the logging when given one, else the single logger. */
export function scopedLogger(source: LoggerSource, name: string): Logger {
  return typeof source.scope === 'function' ? source.scope(name) : (source as Logger);
}
