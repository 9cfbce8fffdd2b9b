export { LOG_LEVELS, newNopLogger, type LogFields, type LogLevel, type LogMethod, type Logger } from './logger.js';
export type { LoggingControl, ScopeInfo, ScopePatch } from './control.js';
export { AGENT_SCOPES, ALL_SCOPES, DAEMON_SCOPES, DEFAULT_SCOPE, type ScopeDescriptor } from './scopes.js';
export { isLogLevel } from './levels.js';
export { parseLevelSpec, parseScopeList } from './level-spec.js';
export { DEFAULT_LOGGING_OPTIONS, type LoggingOptions } from './options.js';
export { addLoggingFlags, loggingOptionsFrom, type LoggingFlagValues } from './logging-flags.js';
export { newLogging, type Logging, type LoggingDeps } from './logging.js';
export type { LogStream } from './sinks.js';
