import { UsageError } from '../errors.js';
import { isLogLevel } from './levels.js';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { ALL_SCOPES, DEFAULT_SCOPE } from './scopes.js';

/**
 * Parses `<scope>:<level>,...` (a bare `<level>` means the default scope) as given to `flag`.
 * Later items win; a repeated scope moves to its last position so that order keeps meaning
 * (`all:warn,ads:debug` leaves ads at debug). Scopes are not checked against a list: scopes
 * register lazily, and a level waits for its scope.
 */
export function parseLevelSpec(text: string, flag = '--log_output_level'): Map<string, LogLevel> {
  const levels = new Map<string, LogLevel>();
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const parts = item.split(':');
    if (parts.length > 2) {
      throw new UsageError(`invalid ${flag} "${item}": expected <scope>:<level> or <level>`);
    }
    const [scope, level] = parts.length === 1 ? [DEFAULT_SCOPE, parts[0]] : [parts[0]?.trim(), parts[1]?.trim()];
    if (scope === undefined || !isScopeName(scope)) {
      throw new UsageError(`invalid ${flag} "${item}": expected <scope>:<level> with a scope name of letters, digits, - or _`);
    }
    if (!isLogLevel(level)) {
      throw new UsageError(`invalid ${flag} "${item}": level must be one of ${LOG_LEVELS.join(', ')}`);
    }
    levels.delete(scope);
    levels.set(scope, level);
  }
  return levels;
}

/** Parses a comma-separated list of scope names, such as `--log_caller`. */
export function parseScopeList(text: string, flag = '--log_caller'): string[] {
  const scopes: string[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (!isScopeName(name)) {
      throw new UsageError(`invalid ${flag} "${name}": expected comma-separated scope names`);
    }
    if (!scopes.includes(name)) scopes.push(name);
  }
  return scopes;
}

/**
 * The level a spec gives `scope`: the `default` entry is the fallback, then entries naming the
 * scope or `all` apply in order.
 */
export function levelFor(spec: ReadonlyMap<string, LogLevel>, scope: string, fallback: LogLevel): LogLevel {
  let level = spec.get(DEFAULT_SCOPE) ?? fallback;
  for (const [name, value] of spec) {
    if (name === scope || name === ALL_SCOPES) level = value;
  }
  return level;
}

/** Whether a `--log_caller` list turns caller info on for `scope`. */
export function callersFor(scopes: readonly string[], scope: string): boolean {
  return scopes.includes(scope) || scopes.includes(ALL_SCOPES);
}

/** Scope names are identifiers: the spec syntax reserves `:` and `,`, and `.` as the reference does. */
export function isScopeName(name: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(name);
}
