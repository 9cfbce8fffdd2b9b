import type { LogLevel } from './logger.js';
import { DEFAULT_SCOPE } from './scopes.js';

/** The parsed values of the `--log_*` flags. */
export interface LoggingOptions {
  /** `--log_as_json`: one JSON object per line instead of the console format. */
  asJson: boolean;
  /** `--log_caller`: scopes whose entries carry the caller's file and line (`all` for every scope). */
  callerScopes: readonly string[];
  /** `--log_output_level`: minimum level per scope; `default` is the fallback, `all` sets every scope. */
  outputLevels: ReadonlyMap<string, LogLevel>;
  /** `--log_rotate`: path of a rotating log file written besides the targets; '' for none. */
  rotatePath: string;
  /** `--log_rotate_max_age`: days a backup is kept; 0 no limit. */
  rotateMaxAgeDays: number;
  /** `--log_rotate_max_backups`: backups kept; 0 no limit. */
  rotateMaxBackups: number;
  /** `--log_rotate_max_size`: size in megabytes at which the file rotates (0 means 100). */
  rotateMaxSizeMb: number;
  /** `--log_stacktrace_level`: per scope, entries at or above this level carry a stack trace. */
  stackTraceLevels: ReadonlyMap<string, LogLevel>;
  /** `--log_target`: `stdout`, `stderr` or file paths (appended to); every target gets every entry. */
  targets: readonly string[];
}

export const DEFAULT_LOGGING_OPTIONS: Readonly<LoggingOptions> = Object.freeze({
  asJson: false,
  callerScopes: Object.freeze([]),
  outputLevels: new Map<string, LogLevel>([[DEFAULT_SCOPE, 'info']]),
  rotatePath: '',
  rotateMaxAgeDays: 30,
  rotateMaxBackups: 1000,
  rotateMaxSizeMb: 104857600,
  stackTraceLevels: new Map<string, LogLevel>([[DEFAULT_SCOPE, 'none']]),
  targets: Object.freeze(['stdout']),
});
