import type { LogFields, Logger, LogLevel, LogMethod } from '../runtime/index.js';

/** One captured log entry, with the fields bound through `with()` merged in. */
export interface LogEntry {
  level: Exclude<LogLevel, 'none'>;
  message: string;
  fields: LogFields;
}

/** A logger for tests that appends every entry to `entries`, at every level. */
export function newRecordingLogger(entries: LogEntry[], bound: LogFields = {}, scope = 'test'): Logger {
  const method = (level: LogEntry['level']): LogMethod =>
    ((fieldsOrMessage: LogFields | string, message?: string) => {
      if (typeof fieldsOrMessage === 'string') entries.push({ level, message: fieldsOrMessage, fields: { ...bound } });
      else entries.push({ level, message: message ?? '', fields: { ...bound, ...fieldsOrMessage } });
    }) as LogMethod;
  return {
    scope,
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    fatal: method('fatal'),
    with: (fields) => newRecordingLogger(entries, { ...bound, ...fields }, scope),
    isEnabled: () => true,
  };
}
