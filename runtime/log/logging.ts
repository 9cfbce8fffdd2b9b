import { newRealClock, type Clock } from '../clock.js';
import { MeshError, UsageError } from '../errors.js';
import { captureCaller, captureStack } from './call-site.js';
import type { LoggingControl, ScopeInfo, ScopePatch } from './control.js';
import { errorMessage } from '../errors.js';
import { formatConsole, formatJson, formatTimestamp, type LogEntry } from './format.js';
import { callersFor, isScopeName, levelFor } from './level-spec.js';
import { isAtOrAbove, isLogLevel } from './levels.js';
import type { LogFields, Logger, LogLevel, LogMethod } from './logger.js';
import { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from './options.js';
import { newRotatingFile } from './rotating-file.js';
import { ALL_SCOPES, DEFAULT_SCOPE, type ScopeDescriptor } from './scopes.js';
import { newFileSink, newStreamSink, type LogSink, type LogStream } from './sinks.js';

export interface LoggingDeps {
  clock?: Clock;
  /** The `stdout` target; process.stdout when absent. */
  stdout?: LogStream;
  /** The `stderr` target and where failed writes are reported; process.stderr when absent. */
  stderr?: LogStream;
  /** Internal, for tests: rotate at this many bytes instead of `rotateMaxSizeMb` megabytes. */
  rotateMaxSizeBytes?: number;
}

/** The logging of one process: loggers per scope, run-time control of the scopes, and its files. */
export interface Logging extends LoggingControl {
  /** The logger of `name`, registering the scope on first use when the program did not list it. */
  scope(name: string, description?: string): Logger;
  /** Closes the files; later entries still reach stdout and stderr targets. */
  close(): Promise<void>;
}

type EntryLevel = Exclude<LogLevel, 'none'>;

interface ScopeState extends ScopeInfo {
  root?: Logger;
}

const MEGABYTE = 1024 * 1024;
/** Lumberjack's size when none is given. */
const DEFAULT_ROTATE_SIZE_MB = 100;

/**
 * Builds the logging of a process from its `--log_*` options and the scopes it declares. A
 * level spec may name scopes that register later; they take their level when they do.
 */
export function newLogging(options: Partial<LoggingOptions> = {}, scopes: readonly ScopeDescriptor[] = [], deps: LoggingDeps = {}): Logging {
  const opts: LoggingOptions = { ...DEFAULT_LOGGING_OPTIONS, ...options };
  const clock = deps.clock ?? newRealClock();
  const errorStream = (): LogStream => deps.stderr ?? process.stderr;
  let sinks = openSinks(opts, deps, clock);
  const encode = opts.asJson ? formatJson : formatConsole;
  const states = new Map<string, ScopeState>();

  const write = (entry: LogEntry): void => {
    const text = encode(entry);
    for (const sink of sinks) {
      try {
        sink.write(text);
      } catch (error) {
        reportWriteError(sink, error);
      }
    }
  };

  const reportWriteError = (sink: LogSink, error: unknown): void => {
    if (sink.kind === 'stream' && sink.name === 'stderr') return;
    const reason = errorMessage(error);
    try {
      errorStream().write(`${formatTimestamp(clock.now())}\terror\tlog write to ${sink.name} failed: ${reason}\n`);
    } catch {
      // Nowhere left to report to.
    }
  };

  const register = (name: string, description: string): ScopeState => {
    const existing = states.get(name);
    if (existing) {
      if (existing.description === '' && description !== '') existing.description = description;
      return existing;
    }
    const state: ScopeState = {
      name,
      description,
      outputLevel: levelFor(opts.outputLevels, name, 'info'),
      stackTraceLevel: levelFor(opts.stackTraceLevels, name, 'none'),
      logCallers: callersFor(opts.callerScopes, name),
    };
    states.set(name, state);
    return state;
  };

  const newLogger = (state: ScopeState, bound: LogFields): Logger => {
    const method = (level: EntryLevel): LogMethod => {
      const log = (fieldsOrMessage: LogFields | string, maybeMessage?: string): void => {
        if (!isAtOrAbove(level, state.outputLevel)) return;
        const [fields, message] = typeof fieldsOrMessage === 'string' ? [bound, fieldsOrMessage] : [{ ...bound, ...fieldsOrMessage }, maybeMessage ?? ''];
        const entry: LogEntry = { timeMs: clock.now(), level, scope: state.name, message, fields };
        if (state.logCallers) entry.caller = captureCaller(log);
        if (isAtOrAbove(level, state.stackTraceLevel)) entry.stack = captureStack(log);
        write(entry);
      };
      return log as LogMethod;
    };
    return {
      scope: state.name,
      debug: method('debug'),
      info: method('info'),
      warn: method('warn'),
      error: method('error'),
      fatal: method('fatal'),
      with: (fields) => newLogger(state, { ...bound, ...fields }),
      isEnabled: (level) => isAtOrAbove(level, state.outputLevel),
    };
  };

  for (const scope of scopes) {
    if (scope.name !== ALL_SCOPES) register(scope.name, scope.description);
  }
  register(DEFAULT_SCOPE, '');

  return {
    scope(name, description = '') {
      if (name === ALL_SCOPES || !isScopeName(name)) {
        throw new MeshError('invalid-scope', `invalid logging scope name "${name}"`);
      }
      const state = register(name, description);
      state.root ??= newLogger(state, {});
      return state.root;
    },
    listScopes: () => [...states.values()].map(toInfo),
    getScope(name) {
      const state = states.get(name);
      return state ? toInfo(state) : undefined;
    },
    setScope(name, patch) {
      const state = states.get(name);
      if (!state) throw new MeshError('unknown-scope', `unknown logging scope "${name}"`);
      checkPatch(patch);
      if (patch.outputLevel !== undefined) state.outputLevel = patch.outputLevel;
      if (patch.stackTraceLevel !== undefined) state.stackTraceLevel = patch.stackTraceLevel;
      if (patch.logCallers !== undefined) state.logCallers = patch.logCallers;
      return toInfo(state);
    },
    async close() {
      const files = sinks.filter((sink) => sink.kind === 'file');
      sinks = sinks.filter((sink) => sink.kind === 'stream');
      for (const sink of files) {
        try {
          sink.close();
        } catch (error) {
          reportWriteError(sink, error);
        }
      }
    },
  };
}

function openSinks(opts: LoggingOptions, deps: LoggingDeps, clock: Clock): LogSink[] {
  const sinks: LogSink[] = [];
  const open = (flag: string, path: string, create: () => LogSink): void => {
    try {
      sinks.push(create());
    } catch (error) {
      for (const sink of sinks) sink.close();
      throw new UsageError(`invalid ${flag} "${path}": cannot open: ${errorMessage(error)}`, { cause: error });
    }
  };
  for (const target of opts.targets) {
    if (target === 'stdout') sinks.push(newStreamSink('stdout', deps.stdout ?? process.stdout));
    else if (target === 'stderr') sinks.push(newStreamSink('stderr', deps.stderr ?? process.stderr));
    else open('--log_target', target, () => newFileSink(target));
  }
  if (opts.rotatePath !== '') {
    const maxSizeBytes = deps.rotateMaxSizeBytes ?? (opts.rotateMaxSizeMb || DEFAULT_ROTATE_SIZE_MB) * MEGABYTE;
    open('--log_rotate', opts.rotatePath, () =>
      newRotatingFile({
        path: opts.rotatePath,
        maxSizeBytes,
        maxAgeDays: opts.rotateMaxAgeDays,
        maxBackups: opts.rotateMaxBackups,
        clock,
      }),
    );
  }
  return sinks;
}

function checkPatch(patch: ScopePatch): void {
  for (const key of ['outputLevel', 'stackTraceLevel'] as const) {
    const value = patch[key];
    if (value !== undefined && !isLogLevel(value)) {
      throw new MeshError('invalid-log-level', `invalid ${key} "${String(value)}"`);
    }
  }
  if (patch.logCallers !== undefined && typeof patch.logCallers !== 'boolean') {
    throw new MeshError('invalid-log-callers', `invalid logCallers "${String(patch.logCallers)}": expected true or false`);
  }
}

function toInfo(state: ScopeState): ScopeInfo {
  return {
    name: state.name,
    description: state.description,
    outputLevel: state.outputLevel,
    stackTraceLevel: state.stackTraceLevel,
    logCallers: state.logCallers,
  };
}
