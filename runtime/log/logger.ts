/**
 * The logging contract every package codes against. Loggers are passed in, never created by
 * library code. Messages are constant; variable data goes in `fields`:
 *   log.info({ kind, namespace, name }, 'reconciled')
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'none';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'fatal', 'none'];

export type LogFields = Record<string, unknown>;

export interface LogMethod {
  (message: string): void;
  (fields: LogFields, message: string): void;
}

export interface Logger {
  readonly scope: string;
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  fatal: LogMethod;
  /** A logger of the same scope that adds `fields` to every entry (a reconcile id, a proxy id). */
  with(fields: LogFields): Logger;
  /** True when an entry at `level` would be written (to skip building expensive fields). */
  isEnabled(level: LogLevel): boolean;
}

/** A logger that writes nothing: for tests and for code paths given no logger. */
export function newNopLogger(scope = 'default'): Logger {
  const nop = (() => undefined) as LogMethod;
  const logger: Logger = {
    scope,
    debug: nop,
    info: nop,
    warn: nop,
    error: nop,
    fatal: nop,
    with: () => logger,
    isEnabled: () => false,
  };
  return logger;
}
