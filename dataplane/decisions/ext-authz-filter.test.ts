import { describe, expect, it, test } from '@jest/globals';
import { readGrpcAnswer, readHttpAnswer } from './ext-authz-answer.js';
import { buildHttpCheckCall, buildHttpCheckRequest, buildNetworkCheckRequest } from './ext-authz-check-request.js';
import { compileExtAuthzHttpSettings, type ExtAuthzConfig, type ExtAuthzHttpService } from './ext-authz-config.js';
import { compileExtAuthzHttpFilter, compileExtAuthzNetworkFilter, type ExtAuthzHttpInput } from './ext-authz-filter.js';
import { httpExtAuthzCounters, networkExtAuthzCounters } from './ext-authz-stats.js';
import type { CheckResponseMessage, ExtAuthzGrpcCall, ExtAuthzHttpAnswer, ExtAuthzHttpCall, ExtAuthzTransport } from './ext-authz-types.js';
import type { ConnectionFacts, HttpRequestFacts } from './facts.js';

const HTTP_CLUSTER = 'outbound|8000||authz.foo';
const GRPC_CLUSTER = 'outbound|9000||authz.foo';
const HTTP_SERVICE = { server_uri: { uri: 'http://authz.foo', cluster: HTTP_CLUSTER, timeout: { seconds: '1' } } };
const GRPC_SERVICE = { envoy_grpc: { cluster_name: GRPC_CLUSTER, authority: 'authz.foo' }, timeout: { nanos: 300_000_000 } };
const POLICY = 'mesh-ext-authz-ns[bar]-policy[ext]-rule[0]';
const ENABLED = {
  filter: 'envoy.filters.http.rbac',
  path: [{ key: 'mesh_ext_authz_shadow_effective_policy_id' }],
  value: { string_match: { prefix: 'mesh-ext-authz' } },
};
const MATCHED = { 'envoy.filters.http.rbac': { mesh_ext_authz_shadow_effective_policy_id: POLICY, mesh_ext_authz_shadow_engine_result: 'denied' } };

const TLS_CONNECTION: ConnectionFacts = {
  destinationAddress: '10.0.0.2',
  destinationPort: 8000,
  sourceAddress: '10.0.0.1',
  sourcePort: 40000,
  transportProtocol: 'tls',
  peerCertificate: { uriSans: ['spiffe://cluster.local/ns/foo/sa/sleep'], dnsSans: [], subject: 'O=mesh', sha256: '00' },
};
const REQUEST: HttpRequestFacts = {
  method: 'POST',
  host: 'httpbin.bar:8000',
  path: '/headers?q=1',
  headers: { host: 'httpbin.bar:8000', authorization: 'Bearer t', 'content-length': '5', 'x-a': '1', 'x-b': '2', cookie: 'c=1' },
  protocol: 'HTTP/2',
};

/** A transport that records the calls and answers as told: what `x authz explain` would give. */
function recordingTransport(
  http: ExtAuthzHttpAnswer = { kind: 'response', status: 200, headers: {}, body: new Uint8Array() },
  grpc: CheckResponseMessage = { status: { code: 0 } },
) {
  const calls: (ExtAuthzHttpCall | ExtAuthzGrpcCall)[] = [];
  const transport: ExtAuthzTransport = {
    http: async (call) => (calls.push(call), http),
    grpc: async (call) => (calls.push(call), { kind: 'response', response: grpc }),
  };
  return { transport, calls };
}

const input = (overrides: Partial<ExtAuthzHttpInput> = {}): ExtAuthzHttpInput => ({
  request: REQUEST,
  metadata: MATCHED,
  check: { connection: TLS_CONNECTION, localUriSan: 'spiffe://cluster.local/ns/bar/sa/httpbin', terminatesTls: true },
  now: new Date('2026-01-02T03:04:05.678Z'),
  streamId: 7,
  statCluster: 'inbound|8000||',
  ...overrides,
});

const httpFilter = (fields: Partial<ExtAuthzConfig> = {}) =>
  compileExtAuthzHttpFilter({ http_service: HTTP_SERVICE, transport_api_version: 'V3', filter_enabled_metadata: ENABLED, ...fields });
const grpcFilter = (fields: Partial<ExtAuthzConfig> = {}) =>
  compileExtAuthzHttpFilter({ grpc_service: GRPC_SERVICE, transport_api_version: 'V3', filter_enabled_metadata: ENABLED, ...fields });
const httpServiceOf = (http: ExtAuthzConfig['http_service'], fields: Partial<ExtAuthzConfig> = {}): ExtAuthzHttpService =>
  compileExtAuthzHttpSettings({ http_service: http, transport_api_version: 'V3', ...fields }).service as ExtAuthzHttpService;

describe('the check request', () => {
  test('to an HTTP server: method, path prefix + path, Host, Authorization, allowed headers, headers_to_add over them, its own Content-Length', () => {
    const service = httpServiceOf(
      { ...HTTP_SERVICE, path_prefix: '/check', authorization_request: { headers_to_add: [{ key: 'x-b', value: 'added' }] } },
      { allowed_headers: { patterns: [{ exact: 'x-b' }] } },
    );
    expect(buildHttpCheckCall(service, { request: REQUEST, now: new Date(), streamId: 1 })).toEqual({
      cluster: HTTP_CLUSTER,
      timeoutMs: 1000,
      method: 'POST',
      path: '/check/headers?q=1',
      headers: { host: 'httpbin.bar:8000', authorization: 'Bearer t', 'x-b': 'added', 'content-length': '0' },
      body: new Uint8Array(0),
    });
    const withBody = buildHttpCheckCall(service, {
      request: REQUEST,
      now: new Date(),
      streamId: 1,
      body: { settings: { maxBytes: 4, allowPartial: true, packAsBytes: false }, buffered: { bytes: Buffer.from('abcd'), truncated: true } },
    });
    expect(withBody.headers).toMatchObject({ 'content-length': '4', 'x-envoy-auth-partial-body': 'true' });
  });

  test('to a gRPC server: peers with principals, every header with the pseudo-headers, size, time and stream id', () => {
    const message = buildHttpCheckRequest(
      { connection: TLS_CONNECTION, localUriSan: 'spiffe://cluster.local/ns/bar/sa/httpbin', terminatesTls: true },
      { request: REQUEST, now: new Date('2026-01-02T03:04:05.678Z'), streamId: 7 },
    );
    expect(message.attributes.source).toEqual({
      address: { socket_address: { address: '10.0.0.1', port_value: 40000 } },
      principal: 'spiffe://cluster.local/ns/foo/sa/sleep',
    });
    expect(message.attributes.destination).toEqual({
      address: { socket_address: { address: '10.0.0.2', port_value: 8000 } },
      principal: 'spiffe://cluster.local/ns/bar/sa/httpbin',
    });
    expect(message.attributes.request).toEqual({
      time: { seconds: 1767323045, nanos: 678_000_000 },
      http: {
        id: '7',
        method: 'POST',
        headers: {
          ':authority': 'httpbin.bar:8000',
          ':method': 'POST',
          ':path': '/headers?q=1',
          ':scheme': 'https',
          authorization: 'Bearer t',
          'content-length': '5',
          'x-a': '1',
          'x-b': '2',
          cookie: 'c=1',
        },
        path: '/headers?q=1',
        host: 'httpbin.bar:8000',
        scheme: 'https',
        protocol: 'HTTP/2',
        size: 5,
      },
    });
  });

  test('principals: the subject without a URI SAN; none in plain text; the body as text or bytes', () => {
    const subjectOnly = { ...TLS_CONNECTION, peerCertificate: { uriSans: [], dnsSans: ['a.example'], subject: 'CN=a', sha256: '00' } };
    expect(buildNetworkCheckRequest({ connection: subjectOnly, terminatesTls: true }).attributes.source.principal).toBe('CN=a');
    const plain = buildNetworkCheckRequest({
      connection: { ...TLS_CONNECTION, transportProtocol: 'raw_buffer', peerCertificate: undefined } as ConnectionFacts,
      localUriSan: 'spiffe://x',
      terminatesTls: false,
    });
    expect(plain.attributes).toEqual({
      source: { address: { socket_address: { address: '10.0.0.1', port_value: 40000 } }, principal: '' },
      destination: { address: { socket_address: { address: '10.0.0.2', port_value: 8000 } }, principal: '' },
    });
    const body = { bytes: Buffer.from('héllo'), truncated: false };
    const asText = buildHttpCheckRequest(
      { connection: TLS_CONNECTION, terminatesTls: true },
      { request: REQUEST, now: new Date(0), streamId: 1, body: { settings: { maxBytes: 9, allowPartial: false, packAsBytes: false }, buffered: body } },
    );
    expect(asText.attributes.request?.http).toMatchObject({ body: 'héllo' });
    const asBytes = buildHttpCheckRequest(
      { connection: TLS_CONNECTION, terminatesTls: true },
      { request: REQUEST, now: new Date(0), streamId: 1, body: { settings: { maxBytes: 9, allowPartial: false, packAsBytes: true }, buffered: body } },
    );
    expect(asBytes.attributes.request?.http.raw_body).toEqual(body.bytes);
    expect(asBytes.attributes.request?.http.body).toBeUndefined();
  });
});

describe('reading the answer', () => {
  const response = (status: number, headers: Record<string, string | string[]>, body = ''): ExtAuthzHttpAnswer => ({
    kind: 'response',
    status,
    headers,
    body: Buffer.from(body),
  });
  const configured = httpServiceOf({
    ...HTTP_SERVICE,
    authorization_response: {
      allowed_upstream_headers: { patterns: [{ prefix: 'x-up' }] },
      allowed_client_headers: { patterns: [{ exact: 'x-why' }] },
      allowed_client_headers_on_success: { patterns: [{ exact: 'x-trace' }] },
    },
  });
  const bare = httpServiceOf(HTTP_SERVICE);

  it.each<[string, ExtAuthzHttpService, ExtAuthzHttpAnswer, object]>([
    [
      '200: allowed headers set upstream, x-envoy-auth-headers-to-remove (never Host or pseudo-headers), success headers to the client',
      configured,
      response(200, { 'x-up-user': 'alice', 'x-other': 'o', 'x-envoy-auth-headers-to-remove': 'x-secret, Host, :path, X-Two', 'x-trace': 't' }),
      {
        kind: 'ok',
        requestMutations: [{ name: 'x-up-user', value: 'alice', action: 'overwrite' }],
        requestRemovals: ['x-secret', 'x-two'],
        responseMutations: [{ name: 'x-trace', value: 't', action: 'append' }],
      },
    ],
    [
      '200 with nothing configured: no edits',
      bare,
      response(200, { 'x-up-user': 'alice' }),
      { kind: 'ok', requestMutations: [], requestRemovals: [], responseMutations: [] },
    ],
    ['a 5xx is an error', configured, response(503, {}), { kind: 'error', detail: 'the authorization server answered 503' }],
    [
      'a denial with matchers: the matched headers plus WWW-Authenticate and Location',
      configured,
      response(401, { 'x-why': 'no', 'www-authenticate': 'Bearer', location: '/login', 'x-other': 'o', 'content-length': '2' }, 'no'),
      { kind: 'denied', status: 401, headers: { 'x-why': 'no', 'www-authenticate': 'Bearer', location: '/login' }, body: 'no' },
    ],
    [
      'a denial without matchers: every header but Host (and the framing ones)',
      bare,
      response(302, { host: 'h', location: '/x', 'set-cookie': ['a=1', 'b=2'], 'transfer-encoding': 'chunked' }),
      { kind: 'denied', status: 302, headers: { location: '/x', 'set-cookie': ['a=1', 'b=2'] }, body: '' },
    ],
    [
      'no answer is an error',
      configured,
      { kind: 'failure', reason: 'timeout', detail: 'no answer within 1000 ms' },
      { kind: 'error', detail: 'timeout: no answer within 1000 ms' },
    ],
  ])('HTTP: %s', (_, service, answer, expected) => {
    expect(readHttpAnswer(service, answer)).toEqual(expected);
  });

  it.each<[string, CheckResponseMessage, object]>([
    [
      'OK: append true appends, false overwrites, the default action appends, ADD_IF_ABSENT only adds; removals and client headers',
      {
        status: { code: 0 },
        ok_response: {
          headers: [
            { header: { key: 'X-A', value: '1' }, append: { value: true } },
            { header: { key: 'x-b', value: '2' }, append: { value: false } },
            { header: { key: 'x-c', value: '3' }, append: null, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
            { header: { key: 'x-d', value: '4' }, append_action: 'ADD_IF_ABSENT' },
            { header: { key: 'x-e', value: '' } },
          ],
          headers_to_remove: ['X-Secret', 'host', ':authority'],
          response_headers_to_add: [{ header: { key: 'x-trace', value: 't' }, append_action: 2 }],
        },
      },
      {
        kind: 'ok',
        requestMutations: [
          { name: 'x-a', value: '1', action: 'append' },
          { name: 'x-b', value: '2', action: 'overwrite' },
          { name: 'x-c', value: '3', action: 'append' },
          { name: 'x-d', value: '4', action: 'add-if-absent' },
        ],
        requestRemovals: ['x-secret'],
        responseMutations: [{ name: 'x-trace', value: 't', action: 'overwrite' }],
      },
    ],
    ['OK without an ok_response', { status: { code: 0 }, ok_response: null }, { kind: 'ok', requestMutations: [], requestRemovals: [], responseMutations: [] }],
    [
      'denied by name',
      { status: { code: 7 }, denied_response: { status: { code: 'Unauthorized' }, headers: [{ header: { key: 'x-why', value: 'no' } }], body: 'go' } },
      { kind: 'denied', status: 401, headers: { 'x-why': 'no' }, body: 'go' },
    ],
    [
      'denied by a number outside the enum',
      { status: { code: 16 }, denied_response: { status: { code: 299 } } },
      { kind: 'denied', status: 299, headers: {}, body: '' },
    ],
    ['a non-OK status without a denied response is 403', { status: { code: 14 } }, { kind: 'denied', status: 403, headers: {}, body: '' }],
  ])('gRPC: %s', (_, message, expected) => {
    expect(readGrpcAnswer({ kind: 'response', response: message })).toEqual(expected);
  });
});

describe('the filter', () => {
  test('skipped (disabled) without the CUSTOM metadata: nothing is called', async () => {
    const { transport, calls } = recordingTransport();
    expect(await httpFilter()(input({ metadata: {}, transport }))).toMatchObject({
      kind: 'continue',
      verdict: { result: 'disabled', statCluster: 'inbound|8000||' },
    });
    expect(calls).toEqual([]);
  });

  test('a recording transport sees the cluster that would be called and answers as it chooses', async () => {
    const { transport, calls } = recordingTransport({ kind: 'response', status: 403, headers: {}, body: Buffer.from('no') }, { status: { code: 7 } });
    expect(await httpFilter()(input({ transport }))).toMatchObject({
      kind: 'respond',
      status: 403,
      body: 'no',
      verdict: { result: 'denied', calledCluster: HTTP_CLUSTER },
    });
    expect(await grpcFilter()(input({ transport }))).toMatchObject({
      kind: 'respond',
      status: 403,
      verdict: { result: 'denied', calledCluster: GRPC_CLUSTER },
    });
    expect(calls.map((call) => call.cluster)).toEqual([HTTP_CLUSTER, GRPC_CLUSTER]);
    expect(calls[1]).toMatchObject({ authority: 'authz.foo', timeoutMs: 300 });
  });

  test('without a transport a check is an error: status_on_error with an empty body, or through with failure_mode_allow', async () => {
    expect(await httpFilter({ status_on_error: { code: 'ServiceUnavailable' } })(input())).toMatchObject({
      kind: 'respond',
      status: 503,
      body: '',
      verdict: { result: 'error' },
    });
    expect(await grpcFilter({ failure_mode_allow: true })(input())).toMatchObject({
      kind: 'continue',
      verdict: { result: 'error', failureModeAllowed: true },
      requestMutations: [],
    });
  });

  test('a transport that throws is an error, not a crash', async () => {
    const transport: ExtAuthzTransport = { http: () => Promise.reject(new Error('boom')), grpc: () => Promise.reject(new Error('boom')) };
    expect(await httpFilter()(input({ transport }))).toMatchObject({ kind: 'respond', status: 403, verdict: { result: 'error', detail: 'reset: boom' } });
  });

  test('the body: read up to the limit; past it 413 before any check, unless partial', async () => {
    const { transport, calls } = recordingTransport();
    const readBody = async (max: number) => ({ bytes: Buffer.from('0123456789').subarray(0, max), truncated: max < 10 });
    const strict = httpFilter({ with_request_body: { max_request_bytes: 4 } });
    expect(await strict(input({ transport, readBody }))).toMatchObject({
      kind: 'respond',
      status: 413,
      body: 'Payload Too Large',
      verdict: { result: 'payload-too-large' },
    });
    expect(calls).toEqual([]);
    const partial = httpFilter({ with_request_body: { max_request_bytes: 4, allow_partial_message: true } });
    expect(await partial(input({ transport, readBody }))).toMatchObject({ kind: 'continue', verdict: { result: 'ok' } });
    expect(Buffer.from((calls[0] as ExtAuthzHttpCall).body).toString()).toBe('0123');
  });

  test('the network filter: disabled, allowed, denied, error with and without failure_mode_allow', async () => {
    const config = {
      stat_prefix: 'tcp.',
      grpc_service: GRPC_SERVICE,
      transport_api_version: 'V3',
      filter_enabled_metadata: { ...ENABLED, filter: 'envoy.filters.network.rbac' },
    };
    const metadata = { 'envoy.filters.network.rbac': MATCHED['envoy.filters.http.rbac'] };
    const check = { connection: TLS_CONNECTION, terminatesTls: true };
    const filter = compileExtAuthzNetworkFilter(config);
    expect(await filter({ check, metadata: {} })).toEqual({ allowed: true, verdict: { result: 'disabled', statPrefix: 'tcp.' } });
    const allow = recordingTransport();
    expect(await filter({ check, metadata, transport: allow.transport })).toMatchObject({ allowed: true, verdict: { result: 'ok' } });
    expect(allow.calls[0]).toMatchObject({
      activeGauge: 'ext_authz.tcp..active',
      request: { attributes: { source: { principal: 'spiffe://cluster.local/ns/foo/sa/sleep' } } },
    });
    expect((allow.calls[0] as ExtAuthzGrpcCall).request.attributes.request).toBeUndefined();
    expect(await filter({ check, metadata, transport: recordingTransport(undefined, { status: { code: 7 } }).transport })).toMatchObject({
      allowed: false,
      verdict: { result: 'denied' },
    });
    expect(await filter({ check, metadata })).toMatchObject({ allowed: false, verdict: { result: 'error' } });
    expect(await compileExtAuthzNetworkFilter({ ...config, failure_mode_allow: true })({ check, metadata })).toMatchObject({
      allowed: true,
      verdict: { result: 'error', failureModeAllowed: true },
    });
  });
});

describe('the stats, by Envoy name', () => {
  it.each<[object, string[]]>([
    [{ result: 'ok', statCluster: 'c' }, ['cluster.c.ext_authz.ok']],
    [{ result: 'error', failureModeAllowed: true, statCluster: 'c' }, ['cluster.c.ext_authz.error', 'cluster.c.ext_authz.failure_mode_allowed']],
    [{ result: 'disabled', statCluster: 'c' }, ['cluster.c.ext_authz.disabled']],
    [{ result: 'denied' }, []],
    [{ result: 'payload-too-large', statCluster: 'c' }, []],
  ])('HTTP %j', (verdict, names) => {
    expect(httpExtAuthzCounters(verdict as never)).toEqual(names);
  });

  it.each<[object, string[]]>([
    [{ result: 'ok', statPrefix: 'tcp.' }, ['ext_authz.tcp..total', 'ext_authz.tcp..ok']],
    [{ result: 'denied', statPrefix: 'p' }, ['ext_authz.p.total', 'ext_authz.p.denied', 'ext_authz.p.cx_closed']],
    [{ result: 'error', statPrefix: 'p' }, ['ext_authz.p.total', 'ext_authz.p.error', 'ext_authz.p.cx_closed']],
    [{ result: 'error', failureModeAllowed: true, statPrefix: 'p' }, ['ext_authz.p.total', 'ext_authz.p.error', 'ext_authz.p.failure_mode_allowed']],
    [{ result: 'disabled', statPrefix: 'p' }, ['ext_authz.p.disabled']],
  ])('network %j', (verdict, names) => {
    expect(networkExtAuthzCounters(verdict as never)).toEqual(names);
  });
});
