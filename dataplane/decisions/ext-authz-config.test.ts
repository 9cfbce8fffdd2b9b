import { describe, expect, it, test } from '@jest/globals';
import { durationMs, timeoutMs } from './duration.js';
import { compileExtAuthzHttpSettings, compileExtAuthzNetworkSettings, type ExtAuthzConfig } from './ext-authz-config.js';
import { httpStatusCode } from './http-status.js';

const HTTP_SERVICE = { server_uri: { uri: 'http://authz.foo', cluster: 'outbound|8000||authz.foo', timeout: { seconds: '600' } } };
const GRPC_SERVICE = { envoy_grpc: { cluster_name: 'outbound|9000||authz.foo', authority: 'authz.foo' } };
const ENABLED = {
  filter: 'envoy.filters.http.rbac',
  path: [{ key: 'mesh_ext_authz_shadow_effective_policy_id' }],
  value: { string_match: { prefix: 'mesh-ext-authz' } },
};

/** What the reference's generator sets for an HTTP provider, as it arrives decoded from xDS. */
const GENERATED: ExtAuthzConfig = {
  http_service: {
    ...HTTP_SERVICE,
    path_prefix: '/check',
    authorization_request: { headers_to_add: [{ key: 'X-Added', value: 'v' }] },
    authorization_response: {
      allowed_upstream_headers: { patterns: [{ exact: 'x-user', ignore_case: true }] },
      allowed_client_headers: { patterns: [{ prefix: 'x-deny', ignore_case: true }] },
      allowed_client_headers_on_success: { patterns: [{ suffix: '-trace', ignore_case: true }] },
    },
  },
  allowed_headers: { patterns: [{ exact: 'x-a', ignore_case: true }] },
  failure_mode_allow: true,
  status_on_error: { code: 'ServiceUnavailable' },
  with_request_body: { max_request_bytes: 1024, allow_partial_message: true, pack_as_bytes: true },
  transport_api_version: 'V3',
  filter_enabled_metadata: ENABLED,
};

describe('the ext_authz filters take the fields the generator sets', () => {
  test('an HTTP provider: every field compiled, enums and durations as they arrive decoded', () => {
    const settings = compileExtAuthzHttpSettings(GENERATED);
    expect(settings).toMatchObject({ failureModeAllow: true, statusOnError: 503, body: { maxBytes: 1024, allowPartial: true, packAsBytes: true } });
    expect(settings.service).toMatchObject({
      kind: 'http',
      cluster: 'outbound|8000||authz.foo',
      uri: 'http://authz.foo',
      timeoutMs: 600_000,
      pathPrefix: '/check',
      headersToAdd: [['x-added', 'v']],
    });
    const service = settings.service.kind === 'http' ? settings.service : undefined;
    expect([
      service?.allowedHeaders?.('X-A'),
      service?.upstreamHeaders?.('x-user'),
      service?.clientHeaders?.('x-deny-reason'),
      service?.clientHeadersOnSuccess?.('x-trace'),
    ]).toEqual([true, true, true, true]);
    expect(service?.upstreamHeaders?.('x-other')).toBe(false);
    expect(settings.isEnabled({ 'envoy.filters.http.rbac': { mesh_ext_authz_shadow_effective_policy_id: 'mesh-ext-authz-ns[a]-policy[b]-rule[0]' } })).toBe(
      true,
    );
    expect(settings.isEnabled({ 'envoy.filters.http.rbac': { mesh_ext_authz_shadow_engine_result: 'allowed' } })).toBe(false);
  });

  test('defaults: status 403 on error, fail closed, no body, enabled for every request; gRPC waits 200 ms', () => {
    const settings = compileExtAuthzHttpSettings({ grpc_service: GRPC_SERVICE, transport_api_version: 'V3' });
    expect(settings).toMatchObject({
      failureModeAllow: false,
      statusOnError: 403,
      service: { kind: 'grpc', cluster: 'outbound|9000||authz.foo', authority: 'authz.foo', timeoutMs: 200 },
    });
    expect(settings.body).toBeUndefined();
    expect(settings.isEnabled({})).toBe(true);
  });

  test('the reference 1.11 form: allowed_headers inside authorization_request', () => {
    const settings = compileExtAuthzHttpSettings({
      http_service: { ...HTTP_SERVICE, authorization_request: { allowed_headers: { patterns: [{ exact: 'x-b' }] } } },
      transport_api_version: 'V3',
    });
    expect(settings.service.kind === 'http' && settings.service.allowedHeaders?.('x-b')).toBe(true);
  });

  test('the network filter: stat prefix, gRPC service, failure mode, metadata', () => {
    const settings = compileExtAuthzNetworkSettings({
      stat_prefix: 'tcp.',
      grpc_service: { ...GRPC_SERVICE, timeout: '0.5s' },
      failure_mode_allow: true,
      transport_api_version: 'V3',
      filter_enabled_metadata: { ...ENABLED, filter: 'envoy.filters.network.rbac' },
    });
    expect(settings).toMatchObject({ statPrefix: 'tcp.', failureModeAllow: true, service: { timeoutMs: 500 } });
  });

  it.each<[string, ExtAuthzConfig, RegExp]>([
    [
      'an unknown field',
      { http_service: HTTP_SERVICE, transport_api_version: 'V3', include_peer_certificate: true } as ExtAuthzConfig,
      /^include_peer_certificate: is not supported$/,
    ],
    [
      'a field Envoy has but the data plane lacks',
      { http_service: HTTP_SERVICE, transport_api_version: 'V3', charge_cluster_response_stats: { value: false } } as ExtAuthzConfig,
      /^charge_cluster_response_stats: is not supported$/,
    ],
    ['AUTO (unset) transport version', { http_service: HTTP_SERVICE }, /^transport_api_version: must be V3, got AUTO/],
    ['V2', { http_service: HTTP_SERVICE, transport_api_version: 'V2' }, /^transport_api_version: must be V3, got V2/],
    ['no service', { transport_api_version: 'V3' }, /^services: needs exactly one/],
    ['two services', { http_service: HTTP_SERVICE, grpc_service: GRPC_SERVICE, transport_api_version: 'V3' }, /^services: needs exactly one/],
    [
      'no timeout',
      { http_service: { server_uri: { uri: 'http://a', cluster: 'c' } }, transport_api_version: 'V3' },
      /^http_service\.server_uri\.timeout: is required$/,
    ],
    [
      'a negative timeout',
      { http_service: { server_uri: { uri: 'http://a', cluster: 'c', timeout: { seconds: -1 } } }, transport_api_version: 'V3' },
      /^http_service\.server_uri\.timeout: must not be negative$/,
    ],
    ['a bad duration', { grpc_service: { ...GRPC_SERVICE, timeout: 'soon' }, transport_api_version: 'V3' }, /^grpc_service\.timeout: "soon" is not a duration/],
    [
      'no cluster',
      { http_service: { server_uri: { uri: 'http://a', timeout: {} } }, transport_api_version: 'V3' },
      /^http_service\.server_uri\.cluster: is required$/,
    ],
    [
      'google_grpc',
      { grpc_service: { google_grpc: { target_uri: 'a' } } as never, transport_api_version: 'V3' },
      /^grpc_service\.google_grpc: is not supported$/,
    ],
    [
      'a retry policy',
      { grpc_service: { envoy_grpc: { cluster_name: 'c', retry_policy: {} } } as never, transport_api_version: 'V3' },
      /^grpc_service\.envoy_grpc\.retry_policy: is not supported$/,
    ],
    [
      'an unknown status',
      { http_service: HTTP_SERVICE, transport_api_version: 'V3', status_on_error: { code: 299 } },
      /^status_on_error\.code: 299 is not an HTTP status/,
    ],
    [
      'no body limit',
      { http_service: HTTP_SERVICE, transport_api_version: 'V3', with_request_body: { max_request_bytes: 0 } },
      /^with_request_body\.max_request_bytes: must be a positive integer$/,
    ],
    [
      'header matchers for a gRPC server',
      { grpc_service: GRPC_SERVICE, transport_api_version: 'V3', allowed_headers: { patterns: [{ exact: 'a' }] } },
      /^allowed_headers: applies to http_service only/,
    ],
    [
      'header matchers twice',
      {
        http_service: { ...HTTP_SERVICE, authorization_request: { allowed_headers: { patterns: [{ exact: 'a' }] } } },
        transport_api_version: 'V3',
        allowed_headers: { patterns: [{ exact: 'b' }] },
      },
      /^allowed_headers: is also set/,
    ],
    [
      'an empty matcher list',
      { http_service: { ...HTTP_SERVICE, authorization_response: { allowed_upstream_headers: { patterns: [] } } }, transport_api_version: 'V3' },
      /^http_service\.authorization_response\.allowed_upstream_headers: patterns: needs at least one pattern$/,
    ],
    [
      'allowed_upstream_headers_to_append',
      {
        http_service: { ...HTTP_SERVICE, authorization_response: { allowed_upstream_headers_to_append: { patterns: [{ exact: 'a' }] } } } as never,
        transport_api_version: 'V3',
      },
      /^http_service\.authorization_response\.allowed_upstream_headers_to_append: is not supported$/,
    ],
    [
      'a header to add without a key',
      { http_service: { ...HTTP_SERVICE, authorization_request: { headers_to_add: [{ value: 'v' }] } }, transport_api_version: 'V3' },
      /^http_service\.authorization_request\.headers_to_add\[0\]\.key: is required$/,
    ],
    [
      'a metadata matcher without a path',
      { http_service: HTTP_SERVICE, transport_api_version: 'V3', filter_enabled_metadata: { ...ENABLED, path: [] } },
      /^filter_enabled_metadata: path needs at least one key$/,
    ],
  ])('refused, naming the field: %s', (_, config, message) => {
    expect(() => compileExtAuthzHttpSettings(config)).toThrow(message);
  });

  it.each<[string, object, RegExp]>([
    ['no stat prefix', { grpc_service: GRPC_SERVICE, transport_api_version: 'V3' }, /^stat_prefix: is required$/],
    ['no gRPC service', { stat_prefix: 'tcp.', transport_api_version: 'V3' }, /^grpc_service: is required$/],
    [
      'include_peer_certificate',
      { stat_prefix: 'tcp.', grpc_service: GRPC_SERVICE, transport_api_version: 'V3', include_peer_certificate: true },
      /^include_peer_certificate: is not supported$/,
    ],
  ])('the network filter refuses %s', (_, config, message) => {
    expect(() => compileExtAuthzNetworkSettings(config)).toThrow(message);
  });
});

describe('durations and status codes as they arrive', () => {
  it.each<[Parameters<typeof durationMs>[0], number]>([
    [{}, 0],
    [{ seconds: '600' }, 600_000],
    [{ seconds: 1, nanos: 500_000_000 }, 1500],
    [{ nanos: 200_000_000 }, 200],
    ['0.25s', 250],
    ['3s', 3000],
    ['-1.5s', -1500],
  ])('%j is %d ms', (duration, ms) => {
    expect(durationMs(duration)).toBe(ms);
  });

  test('refused: non-integers, nanos out of range, negative timeouts', () => {
    expect(() => durationMs({ seconds: '1.5' })).toThrow(/not an integer/);
    expect(() => durationMs({ nanos: 1e9 })).toThrow(/out of range/);
    expect(() => timeoutMs('-1s')).toThrow(/negative/);
  });

  it.each<[unknown, number | undefined]>([
    ['ServiceUnavailable', 503],
    ['Forbidden', 403],
    [503, 503],
    ['503', 503],
    ['Empty', undefined],
    [0, undefined],
    [299, undefined],
    [undefined, undefined],
  ])('status %j is %j', (code, expected) => {
    expect(httpStatusCode(code)).toBe(expected);
  });
});
