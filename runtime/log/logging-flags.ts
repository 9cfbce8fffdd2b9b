import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { parseLevelSpec, parseScopeList } from './level-spec.js';
import { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from './options.js';

const DEFAULTS = DEFAULT_LOGGING_OPTIONS;

/** The commander option values of the logging flags, keyed as commander names them. */
export type LoggingFlagValues = { readonly [flag: `log_${string}`]: unknown };

/** Adds the nine `--log_*` flags of the seed to `command`, with its names, meanings and defaults. */
export function addLoggingFlags(command: Command): Command {
  // One marker array per command: the first --log_target replaces the default instead of appending.
  const targetDefault = [...DEFAULTS.targets];
  return command
    .addOption(new Option('--log_as_json', 'JSON output instead of console format').default(false))
    .addOption(new Option('--log_caller <string>', 'Comma-separated scopes that include caller info').default(''))
    .addOption(new Option('--log_output_level <string>', '<scope>:<level>,... minimum levels').default('default:info'))
    .addOption(new Option('--log_rotate <string>', 'Path of optional rotating log file').default(''))
    .addOption(intOption('--log_rotate_max_age <int>', 'Days before rotation; 0 no limit', DEFAULTS.rotateMaxAgeDays))
    .addOption(intOption('--log_rotate_max_backups <int>', 'Backups kept; 0 no limit', DEFAULTS.rotateMaxBackups))
    .addOption(intOption('--log_rotate_max_size <int>', 'Rotation size (megabytes as stated)', DEFAULTS.rotateMaxSizeMb))
    .addOption(new Option('--log_stacktrace_level <string>', '<scope>:<level>,... levels that capture stack traces').default('default:none'))
    .addOption(
      new Option('--log_target <stringArray>', 'Output paths; stdout and stderr are special')
        .argParser((value: string, previous: string[] | undefined) => (previous === targetDefault || previous === undefined ? [value] : [...previous, value]))
        .default(targetDefault, `[${targetDefault.join(',')}]`),
    );
}

function intOption(flags: string, description: string, defaultValue: number): Option {
  return new Option(flags, description)
    .argParser((value: string) => {
      const parsed = parseNonNegativeInt(value);
      if (parsed === undefined) throw new InvalidArgumentError(`expected a non-negative integer, got "${value}"`);
      return parsed;
    })
    .default(defaultValue);
}

/**
 * Turns commander's option values (or any record keyed like them) into LoggingOptions. Absent
 * flags take their defaults; bad values throw a UsageError naming the flag.
 */
export function loggingOptionsFrom(opts: LoggingFlagValues): LoggingOptions {
  return {
    asJson: bool(opts.log_as_json, '--log_as_json', DEFAULTS.asJson),
    callerScopes: parseScopeList(str(opts.log_caller, '--log_caller', ''), '--log_caller'),
    outputLevels: parseLevelSpec(str(opts.log_output_level, '--log_output_level', 'default:info'), '--log_output_level'),
    rotatePath: str(opts.log_rotate, '--log_rotate', DEFAULTS.rotatePath),
    rotateMaxAgeDays: int(opts.log_rotate_max_age, '--log_rotate_max_age', DEFAULTS.rotateMaxAgeDays),
    rotateMaxBackups: int(opts.log_rotate_max_backups, '--log_rotate_max_backups', DEFAULTS.rotateMaxBackups),
    rotateMaxSizeMb: int(opts.log_rotate_max_size, '--log_rotate_max_size', DEFAULTS.rotateMaxSizeMb),
    stackTraceLevels: parseLevelSpec(str(opts.log_stacktrace_level, '--log_stacktrace_level', 'default:none'), '--log_stacktrace_level'),
    targets: targets(opts.log_target),
  };
}

function bool(value: unknown, flag: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`invalid ${flag} ${JSON.stringify(value)}: expected true or false`);
}

function str(value: unknown, flag: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value === 'string') return value;
  throw new UsageError(`invalid ${flag} ${JSON.stringify(value)}: expected a string`);
}

function int(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed =
    typeof value === 'number'
      ? Number.isSafeInteger(value) && value >= 0
        ? value
        : undefined
      : typeof value === 'string'
        ? parseNonNegativeInt(value)
        : undefined;
  if (parsed === undefined) {
    throw new UsageError(`invalid ${flag} ${JSON.stringify(String(value))}: expected a non-negative integer`);
  }
  return parsed;
}

function parseNonNegativeInt(text: string): number | undefined {
  if (!/^\+?\d+$/.test(text.trim())) return undefined;
  const parsed = Number(text.trim());
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

function targets(value: unknown): string[] {
  if (value === undefined) return [...DEFAULTS.targets];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((item): item is string => typeof item === 'string')) {
    throw new UsageError(`invalid --log_target ${JSON.stringify(value)}: expected paths`);
  }
  for (const target of list) {
    if (target.trim() === '') throw new UsageError('invalid --log_target "": expected stdout, stderr or a file path');
  }
  return [...list];
}
