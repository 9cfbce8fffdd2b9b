import { describe, expect, test } from '@jest/globals';
import { DEFAULT_JSON_ACCESS_LOG_FORMAT, DEFAULT_TEXT_ACCESS_LOG_FORMAT } from '../../xds/generators/access-log.js';
import { jsonToStruct } from '../../xds/envoy/index.js';
import { compileAccessLogs, FILE_ACCESS_LOG_TYPE } from './access-log.js';
import { compileLogFormat, type AccessLogEntry } from './access-log-format.js';

// The reference's own example: an inbound request denied by a policy.
const denied: AccessLogEntry = {
  startTime: new Date('2026-11-29T17:40:01.234Z'),
  requestHeaders: { ':method': 'GET', ':path': '/status/200', ':authority': 'probe:8000', 'user-agent': 'curl/8', 'x-request-id': 'r-1' },
  responseHeaders: { 'content-length': '19' },
  protocol: 'HTTP/1.1',
  responseCode: 403,
  responseFlags: '',
  responseCodeDetails: 'rbac_access_denied_matched_policy[ns[foo]-policy[deny]-rule[0]]',
  bytesReceived: 0,
  bytesSent: 19,
  durationMs: 0.4,
  upstreamCluster: 'inbound|8080||',
  downstreamLocalAddress: '10.0.0.14:8080',
  downstreamRemoteAddress: '10.0.0.12:52784',
  requestedServerName: 'outbound_.8000_._.probe.foo.svc.cluster.local',
  routeName: 'default',
  downstreamPeerUriSan: 'spiffe://cluster.local/ns/bar/sa/sleep',
};

describe('access-log formats, as Envoy writes them', () => {
  test('the reference default TEXT format: every field in order, unknown ones as -', () => {
    expect(compileLogFormat({ text_format_source: { inline_string: DEFAULT_TEXT_ACCESS_LOG_FORMAT } }, 'test')(denied)).toBe(
      '[2026-11-29T17:40:01.234Z] "GET /status/200 HTTP/1.1" 403 - rbac_access_denied_matched_policy[ns[foo]-policy[deny]-rule[0]] - "-" 0 19 0 - "-" "curl/8" "r-1" "probe:8000" "-" inbound|8080|| - 10.0.0.14:8080 10.0.0.12:52784 outbound_.8000_._.probe.foo.svc.cluster.local default\n',
    );
  });

  test('REQ with a fallback header and a length limit, RESP, addresses without port', () => {
    const format = compileLogFormat(
      { text_format: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH):7% %RESP(CONTENT-LENGTH)% %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% %DOWNSTREAM_PEER_URI_SAN%' },
      'test',
    );
    expect(format(denied)).toBe('/status 19 10.0.0.12 spiffe://cluster.local/ns/bar/sa/sleep');
    expect(format({ ...denied, requestHeaders: { ...denied.requestHeaders, 'x-envoy-original-path': '/a' } })).toMatch(/^\/a 19 /);
  });

  test('JSON (as a Struct from the wire): keys in the given order, numbers as numbers, unknown as null, mixed text as text', () => {
    const format = compileLogFormat(
      {
        json_format: jsonToStruct({
          code: '%RESPONSE_CODE%',
          flags: '%RESPONSE_FLAGS%',
          where: 'at %DOWNSTREAM_LOCAL_ADDRESS% via %UPSTREAM_HOST%',
          n: { route: '%ROUTE_NAME%' },
        }),
      },
      'test',
    );
    expect(format(denied)).toBe('{"code":403,"flags":null,"where":"at 10.0.0.14:8080 via -","n":{"route":"default"}}\n');
    expect(Object.keys(JSON.parse(compileLogFormat({ json_format: DEFAULT_JSON_ACCESS_LOG_FORMAT }, 'test')(denied)) as object)).toEqual(
      Object.keys(DEFAULT_JSON_ACCESS_LOG_FORMAT),
    );
  });

  test('refused, naming the field: an operator it does not know, another logger type, a file without a path', () => {
    const file = (typed: Record<string, unknown>) => [{ name: 'envoy.access_loggers.file', typed_config: { '@type': FILE_ACCESS_LOG_TYPE, ...typed } }];
    expect(() => compileAccessLogs('Listener x', 'access_log', file({ path: '/dev/stdout', log_format: { text_format: '%NOPE%' } }))).toThrow(
      /the access-log operator %NOPE% is not supported/,
    );
    expect(() => compileAccessLogs('Listener x', 'access_log', [{ name: 'grpc', typed_config: { '@type': 'type.googleapis.com/other' } }])).toThrow(
      /^Listener x: access_log\[0\]: access logger type type.googleapis.com\/other is not supported/,
    );
    expect(() => compileAccessLogs('Listener x', 'access_log', file({}))).toThrow(/access_log\[0\]\.path: the file path is required/);
    expect(compileAccessLogs('Listener x', 'access_log', file({ path: '/tmp/x' }))[0]?.format(denied)).toMatch(
      /^\[2026-11-29T17:40:01.234Z\] "GET \/status\/200 HTTP\/1.1" 403 - 0 19 0 /,
    );
  });
});
