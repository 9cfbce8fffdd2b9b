import type { MeshConfig } from '../../crds/index.js';
import type { PushMemo } from '../generator.js';
import type { PushContext } from '../model/push-context.js';
import { jsonToStruct, type JsonValue } from '../envoy/struct-json.js';
import { HCM_TYPE, TCP_PROXY_TYPE } from './http-connection-manager.js';
import { editNetworkFilters } from './listener-edits.js';

export const FILE_ACCESS_LOG_NAME = 'envoy.access_loggers.file';
export const FILE_ACCESS_LOG_TYPE = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

/** The reference's default TEXT access-log format (Envoy's operators), one line per request or connection. */
export const DEFAULT_TEXT_ACCESS_LOG_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ' +
  '%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% ' +
  '%DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" ' +
  '"%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% ' +
  '%DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n';

/** The reference's default JSON access-log fields, in its order. */
export const DEFAULT_JSON_ACCESS_LOG_FORMAT: Readonly<Record<string, string>> = {
  start_time: '%START_TIME%',
  route_name: '%ROUTE_NAME%',
  method: '%REQ(:METHOD)%',
  path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
  protocol: '%PROTOCOL%',
  response_code: '%RESPONSE_CODE%',
  response_flags: '%RESPONSE_FLAGS%',
  response_code_details: '%RESPONSE_CODE_DETAILS%',
  connection_termination_details: '%CONNECTION_TERMINATION_DETAILS%',
  bytes_received: '%BYTES_RECEIVED%',
  bytes_sent: '%BYTES_SENT%',
  duration: '%DURATION%',
  upstream_service_time: '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%',
  x_forwarded_for: '%REQ(X-FORWARDED-FOR)%',
  user_agent: '%REQ(USER-AGENT)%',
  request_id: '%REQ(X-REQUEST-ID)%',
  authority: '%REQ(:AUTHORITY)%',
  upstream_host: '%UPSTREAM_HOST%',
  upstream_cluster: '%UPSTREAM_CLUSTER_RAW%',
  upstream_local_address: '%UPSTREAM_LOCAL_ADDRESS%',
  downstream_local_address: '%DOWNSTREAM_LOCAL_ADDRESS%',
  downstream_remote_address: '%DOWNSTREAM_REMOTE_ADDRESS%',
  requested_server_name: '%REQUESTED_SERVER_NAME%',
  upstream_transport_failure_reason: '%UPSTREAM_TRANSPORT_FAILURE_REASON%',
};

/** A JSON format as written in the mesh config: an object of strings (the reference falls back to its default otherwise). */
function jsonFormatOf(text: string | undefined): Record<string, JsonValue> {
  if (text === undefined || text === '') return DEFAULT_JSON_ACCESS_LOG_FORMAT;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, JsonValue>) : DEFAULT_JSON_ACCESS_LOG_FORMAT;
  } catch {
    return DEFAULT_JSON_ACCESS_LOG_FORMAT;
  }
}

/**
 * The file access log of the mesh config (`accessLogFile`, `accessLogFormat`, `accessLogEncoding`),
 * as the reference builds it for every HTTP connection manager and TCP proxy; none when no file is
 * set. A TEXT format gets its newline when it lacks one.
 */
export function fileAccessLogOf(meshConfig: Pick<MeshConfig, 'accessLogFile' | 'accessLogFormat' | 'accessLogEncoding'>): readonly object[] {
  const path = meshConfig.accessLogFile ?? '';
  if (path === '') return [];
  const format = meshConfig.accessLogFormat ?? '';
  const logFormat =
    meshConfig.accessLogEncoding === 'JSON'
      ? { json_format: jsonToStruct(jsonFormatOf(format)), json_format_options: { sort_properties: false } }
      : { text_format_source: { inline_string: format === '' ? DEFAULT_TEXT_ACCESS_LOG_FORMAT : format.endsWith('\n') ? format : `${format}\n` } };
  return [{ name: FILE_ACCESS_LOG_NAME, typed_config: { '@type': FILE_ACCESS_LOG_TYPE, path, log_format: logFormat } }];
}

const LOGGING_FILTERS: ReadonlySet<string> = new Set([HCM_TYPE, TCP_PROXY_TYPE]);

/** A listener whose HTTP connection managers and TCP proxies write the access log; itself when there is none. */
export function withAccessLog<L extends object>(listener: L, accessLog: readonly object[]): L {
  if (accessLog.length === 0) return listener;
  return editNetworkFilters(listener, LOGGING_FILTERS, (config) => ({ ...config, access_log: accessLog }));
}

/** The mesh config's access log, built once per push. */
export function accessLogOf(push: PushContext, memo: PushMemo): readonly object[] {
  return memo.get('lds/access-log', () => fileAccessLogOf(push.meshConfig));
}
