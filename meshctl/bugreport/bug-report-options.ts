import { parse } from 'yaml';
import { UsageError, errorMessage, parseDuration } from '../../runtime/index.js';
import { parseSelectionSpecs, type SelectionSpec } from './selection.js';

/** The settings of `meshctl bug-report`, as flags and the `-f` file spell them. */
export interface BugReportSettings {
  readonly 'critical-errs': readonly string[];
  readonly 'ignore-errs': readonly string[];
  readonly dir: string;
  readonly 'dry-run': boolean;
  /** Milliseconds; 0 is unset. */
  readonly duration: number;
  readonly 'start-time': string;
  readonly 'end-time': string;
  readonly exclude: readonly string[];
  readonly include: readonly string[];
  readonly 'full-secrets': boolean;
  readonly 'mesh-namespace': string;
  /** Milliseconds. */
  readonly timeout: number;
}

export type BugReportSettingName = keyof BugReportSettings;

/** The settings resolved: times parsed, selection specs parsed. */
export interface BugReportOptions {
  readonly criticalErrs: readonly string[];
  readonly ignoreErrs: readonly string[];
  /** '' when the tree goes to a temporary folder. */
  readonly dir: string;
  readonly dryRun: boolean;
  /** Log lines before this are left out (undefined: from the start). */
  readonly since?: Date;
  /** Log lines after this are left out. */
  readonly until: Date;
  readonly include: readonly SelectionSpec[];
  readonly exclude: readonly SelectionSpec[];
  readonly fullSecrets: boolean;
  readonly meshNamespace: string;
  readonly timeoutMs: number;
}

const NAMES: readonly BugReportSettingName[] = [
  'critical-errs',
  'ignore-errs',
  'dir',
  'dry-run',
  'duration',
  'start-time',
  'end-time',
  'exclude',
  'include',
  'full-secrets',
  'mesh-namespace',
  'timeout',
];

/**
 * The `-f` file's settings: a YAML map keyed by the flag names (`include: [foo]`, `timeout: 5m`,
 * `full-secrets: true`). An unreadable or malformed file is a usage error naming `-f`.
 */
export function parseBugReportFile(text: string, path: string): Partial<BugReportSettings> {
  let document: unknown;
  try {
    document = parse(text) ?? {};
  } catch (error) {
    throw new UsageError(`--filename ${path}: not valid YAML: ${errorMessage(error)}`, { exitCode: 64 });
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new UsageError(`--filename ${path}: expected a map of flag names to values`, { exitCode: 64 });
  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    const fail = (what: string): never => {
      throw new UsageError(`--filename ${path}: "${key}" ${what}`, { exitCode: 64 });
    };
    if (!(NAMES as readonly string[]).includes(key)) fail(`is not a bug-report setting; expected one of ${NAMES.join(', ')}`);
    if (['critical-errs', 'ignore-errs', 'exclude', 'include'].includes(key)) {
      const items = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(items) || items.some((item) => typeof item !== 'string')) fail('must be a list of strings');
      settings[key] = items;
    } else if (key === 'dry-run' || key === 'full-secrets') {
      if (typeof value !== 'boolean') fail('must be true or false');
      settings[key] = value;
    } else if (key === 'duration' || key === 'timeout') {
      try {
        settings[key] = parseDuration(String(value));
      } catch {
        fail(`must be a duration such as 30m or 1h0m0s, got "${String(value)}"`);
      }
    } else {
      settings[key] = value instanceof Date ? value.toISOString() : String(value);
    }
  }
  return settings as Partial<BugReportSettings>;
}

/**
 * Resolves the settings (flags given on the command line win over the file, the file over the
 * defaults) into options. `--duration` with `--start-time` is refused (exit 64, naming both);
 * times are RFC 3339; `--duration` counts back from `--end-time` (default now).
 */
export function resolveBugReportOptions(settings: BugReportSettings, now: Date): BugReportOptions {
  if (settings.duration !== 0 && settings['start-time'] !== '')
    throw new UsageError('--duration and --start-time cannot be used together: give one or the other', { exitCode: 64 });
  if (settings.duration < 0) throw new UsageError('--duration must not be negative', { exitCode: 64 });
  if (settings.timeout <= 0) throw new UsageError('--timeout must be positive', { exitCode: 64 });
  const until = settings['end-time'] === '' ? now : parseTime('--end-time', settings['end-time']);
  let since: Date | undefined;
  if (settings['start-time'] !== '') since = parseTime('--start-time', settings['start-time']);
  else if (settings.duration > 0) since = new Date(until.getTime() - settings.duration);
  if (since !== undefined && since.getTime() > until.getTime())
    throw new UsageError(`--start-time ${since.toISOString()} is after --end-time ${until.toISOString()}`, { exitCode: 64 });
  return {
    criticalErrs: settings['critical-errs'],
    ignoreErrs: settings['ignore-errs'],
    dir: settings.dir,
    dryRun: settings['dry-run'],
    ...(since !== undefined ? { since } : {}),
    until,
    include: parseSelectionSpecs('--include', settings.include),
    exclude: parseSelectionSpecs('--exclude', settings.exclude),
    fullSecrets: settings['full-secrets'],
    meshNamespace: settings['mesh-namespace'],
    timeoutMs: settings.timeout,
  };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function parseTime(flag: string, text: string): Date {
  const time = RFC3339.test(text.trim()) ? new Date(text.trim()) : undefined;
  if (time === undefined || Number.isNaN(time.getTime()))
    throw new UsageError(`${flag}: expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got "${text}"`, { exitCode: 64 });
  return time;
}
