import { compileLogFormat, type AccessLogEntry, type LogFormatConfig } from './access-log-format.js';
import { ConfigRejection } from './config-rejection.js';
import type { TypedConfig } from './envoy-types.js';

export const FILE_ACCESS_LOG_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

/** One access log of a connection manager or TCP proxy: where its lines go and how each is written. */
export interface AccessLogSink {
  readonly path: string;
  readonly format: (entry: AccessLogEntry) => string;
}

/** The `access_log` list of an HTTP connection manager or a TCP proxy; only file loggers (Envoy's default format when none is given). */
export function compileAccessLogs(where: string, field: string, configs: readonly TypedConfig[] | undefined): readonly AccessLogSink[] {
  return (configs ?? []).map((config, index) => {
    const at = `${field}[${index}]`;
    const type = config.typed_config?.['@type'];
    if (type !== FILE_ACCESS_LOG_TYPE)
      throw new ConfigRejection(where, at, `access logger type ${String(type ?? '(none)')} is not supported: only ${FILE_ACCESS_LOG_TYPE}`);
    if ((config as { filter?: unknown }).filter !== undefined) throw new ConfigRejection(where, `${at}.filter`, 'access log filters are not supported');
    const typed = config.typed_config as { path?: string; log_format?: LogFormatConfig; format?: string; json_format?: unknown };
    if (!typed.path) throw new ConfigRejection(where, `${at}.path`, 'the file path is required');
    const logFormat: LogFormatConfig =
      typed.log_format ?? (typed.json_format !== undefined ? { json_format: typed.json_format } : { text_format: typed.format ?? ENVOY_DEFAULT_FORMAT });
    return { path: typed.path, format: compileLogFormat(logFormat, `${where} ${at}`) };
  });
}

/** Envoy's own default when a file logger names no format. */
const ENVOY_DEFAULT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% ' +
  '%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"\n';
