import { describe, expect, test } from '@jest/globals';
import { compileClientCertHeader } from './client-cert-header.js';
import type { HttpRequestFacts, PeerCertificate } from './facts.js';
import { compileHeaderMatcher } from './header-matcher.js';
import { compileRouteMatch } from './route-match.js';
import { compilePathNormalization } from './path-normalization.js';
import { compileRbacFilter, type RbacInput } from './rbac.js';
import { compileStringMatcher } from './string-matcher.js';
import { compileUpstreamTls, decodeCommonTlsContext, dnsNameMatches } from './upstream-tls.js';
import { compileUriTemplate } from './uri-template.js';

const request = (overrides: Partial<HttpRequestFacts> = {}): HttpRequestFacts => ({
  method: 'GET',
  host: 'b.example.com',
  path: '/ip',
  headers: {},
  ...overrides,
});
const peer: PeerCertificate = { uriSans: ['spiffe://cluster.local/ns/foo/sa/sleep'], dnsSans: [], subject: '', sha256: 'ab12' };

describe('string and header matchers', () => {
  test('regexes match the whole value; ignore_case folds everything else', () => {
    expect(compileStringMatcher({ safe_regex: { regex: 'a.c' } })('abc')).toBe(true);
    expect(compileStringMatcher({ safe_regex: { regex: 'a.c' } })('xabcx')).toBe(false);
    expect(compileStringMatcher({ prefix: '/API', ignore_case: true })('/api/v1')).toBe(true);
    expect(compileStringMatcher({ exact: 'x' })('X')).toBe(false);
    expect(() => compileStringMatcher({})).toThrow(/none of/);
  });

  test('a missing header never matches, inverted or not; present_match false matches its absence', () => {
    expect(compileHeaderMatcher({ name: 'x-a', exact_match: '1', invert_match: true })(request())).toBe(false);
    expect(compileHeaderMatcher({ name: 'x-a', exact_match: '1', invert_match: true })(request({ headers: { 'x-a': '2' } }))).toBe(true);
    expect(compileHeaderMatcher({ name: 'x-a', present_match: false })(request())).toBe(true);
    expect(compileHeaderMatcher({ name: ':method', string_match: { exact: 'GET' } })(request())).toBe(true);
    expect(compileHeaderMatcher({ name: ':authority', string_match: { exact: 'B.EXAMPLE.COM', ignore_case: true } })(request())).toBe(true);
  });

  test('uri templates: one segment or the rest of the path', () => {
    expect(compileUriTemplate('/foo/*/bar')('/foo/x/bar')).toBe(true);
    expect(compileUriTemplate('/foo/*/bar')('/foo/x/y/bar')).toBe(false);
    expect(compileUriTemplate('/foo/**')('/foo/a/b/c')).toBe(true);
    expect(compileUriTemplate('/foo/{name=*}')('/foo/a')).toBe(true);
    expect(() => compileUriTemplate('/**/x')).toThrow(/last segment/);
  });
});

describe('RBAC', () => {
  const input = (overrides: Partial<RbacInput> = {}): RbacInput => ({
    connection: { destinationAddress: '127.10.0.2', destinationPort: 8080, sourceAddress: '127.10.0.9', transportProtocol: 'tls', peerCertificate: peer },
    request: request(),
    metadata: {},
    ...overrides,
  });
  const noValidToken = {
    not_id: { metadata: { filter: 'envoy.filters.http.jwt_authn', path: [{ key: 'payload' }, { key: 'iss' }], value: { present_match: true } } },
  };

  test('DENY notRequestPrincipals ["*"]: denied without a verified token, allowed with one', () => {
    const filter = compileRbacFilter({
      rules: { action: 'DENY', policies: { 'ns[foo]-policy[require-jwt]-rule[0]': { permissions: [{ any: true }], principals: [noValidToken] } } },
    });
    expect(filter(input())).toEqual({ allowed: false, matchedPolicy: 'ns[foo]-policy[require-jwt]-rule[0]' });
    expect(filter(input({ metadata: { 'envoy.filters.http.jwt_authn': { payload: { iss: 'i', sub: 's' } } } })).allowed).toBe(true);
  });

  test('ALLOW: only what a policy matches; principals from the peer certificate; paths without the query', () => {
    const filter = compileRbacFilter({
      rules: {
        action: 'ALLOW',
        policies: {
          p: {
            permissions: [{ and_rules: { rules: [{ url_path: { path: { exact: '/ip' } } }, { destination_port: 8080 }] } }],
            principals: [{ authenticated: { principal_name: { exact: 'spiffe://cluster.local/ns/foo/sa/sleep' } } }],
          },
        },
      },
    });
    expect(filter(input({ request: request({ path: '/ip?x=1' }) })).allowed).toBe(true);
    expect(filter(input({ request: request({ path: '/headers' }) })).allowed).toBe(false);
    const plain = input();
    expect(filter({ ...plain, connection: { ...plain.connection, peerCertificate: undefined } as RbacInput['connection'] }).allowed).toBe(false);
  });

  test('a repeated header is matched value by value: DENY on admin sees guest + admin; routes see the joined value', () => {
    const deny = compileRbacFilter({
      rules: {
        action: 'DENY',
        policies: { 'no-admin': { permissions: [{ any: true }], principals: [{ header: { name: 'x-user', string_match: { exact: 'admin' } } }] } },
      },
    });
    const twoValues = request({ headers: { 'x-user': 'guest,admin' }, repeatedHeaders: { 'x-user': ['guest', 'admin'] } });
    expect(deny(input({ request: twoValues })).allowed).toBe(false);
    expect(deny(input({ request: request({ headers: { 'x-user': 'admin' } }) })).allowed).toBe(false);
    expect(deny(input({ request: request({ headers: { 'x-user': 'guest' } }) })).allowed).toBe(true);
    // One header whose value holds a comma is one value, not two.
    expect(deny(input({ request: request({ headers: { 'x-user': 'guest,admin' } }) })).allowed).toBe(true);
    // A value the filters replaced since (the joined value no longer matches) is read as it is now.
    expect(deny(input({ request: request({ headers: { 'x-user': 'guest' }, repeatedHeaders: { 'x-user': ['guest', 'admin'] } }) })).allowed).toBe(true);
    // Inverted: the header is "not admin" only when no value is admin.
    const notAdmin = compileHeaderMatcher({ name: 'x-user', exact_match: 'admin', invert_match: true }, { individually: true });
    expect(notAdmin(twoValues)).toBe(false);
    expect(compileHeaderMatcher({ name: 'x-user', exact_match: 'admin' })(twoValues)).toBe(false);
  });

  test('no rules allows everything; shadow rules only report; unknown fields are refused at compile time', () => {
    expect(compileRbacFilter({})(input()).allowed).toBe(true);
    const shadowed = compileRbacFilter({ shadow_rules: { action: 'DENY', policies: { s: { permissions: [{ any: true }], principals: [{ any: true }] } } } });
    expect(shadowed(input())).toEqual({
      allowed: true,
      shadow: { allowed: false, matchedPolicy: 's' },
      dynamicMetadata: { shadow_engine_result: 'denied', shadow_effective_policy_id: 's' },
    });
    expect(() => compileRbacFilter({ rules: { policies: { p: { permissions: [{ sourced_metadata: {} }], principals: [{ any: true }] } } } })).toThrow(
      /sourced_metadata/,
    );
  });
});

describe('HCM request handling', () => {
  test('path normalization: dot segments, merged slashes, escaped slashes per action', () => {
    const base = compilePathNormalization({ normalize_path: true });
    expect(base('/a/./b/../c?x=/../')).toEqual({ ok: true, path: '/a/c?x=/../' });
    expect(base('/%61dmin')).toEqual({ ok: true, path: '/admin' });
    expect(compilePathNormalization({ normalize_path: true, merge_slashes: true })('//a///b')).toEqual({ ok: true, path: '/a/b' });
    expect(compilePathNormalization({ path_with_escaped_slashes_action: 'REJECT_REQUEST' })('/a%2Fb')).toEqual({ ok: false, status: 400 });
    expect(compilePathNormalization({ path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' })('/a%2fb')).toEqual({ ok: true, path: '/a/b' });
  });

  test('XFCC: appended for mutual TLS, dropped otherwise; sanitized on the outbound side', () => {
    const inbound = compileClientCertHeader({
      forward_client_cert_details: 'APPEND_FORWARD',
      set_current_client_cert_details: { subject: true, dns: true, uri: true },
    });
    const value = inbound(undefined, { peerCertificate: peer, localUriSan: 'spiffe://cluster.local/ns/bar/sa/httpbin' });
    expect(value).toBe('By=spiffe://cluster.local/ns/bar/sa/httpbin;Hash=ab12;Subject="";URI=spiffe://cluster.local/ns/foo/sa/sleep');
    expect(inbound('By=x', {})).toBeUndefined();
    expect(compileClientCertHeader({ forward_client_cert_details: 'SANITIZE' })('By=forged', { peerCertificate: peer })).toBeUndefined();
    const gateway = compileClientCertHeader({ forward_client_cert_details: 'SANITIZE_SET', set_current_client_cert_details: { cert: true, uri: true } });
    expect(gateway('By=forged', { peerCertificate: { ...peer, pem: '-----BEGIN CERTIFICATE-----\nAB\n-----END CERTIFICATE-----\n' } })).toBe(
      'Hash=ab12;Cert="-----BEGIN%20CERTIFICATE-----%0AAB%0A-----END%20CERTIFICATE-----%0A";URI=spiffe://cluster.local/ns/foo/sa/sleep',
    );
    expect(() => compileClientCertHeader({ set_current_client_cert_details: { chain: true } })).toThrow('chain is not supported');
  });

  test('XFCC built once per certificate never carries one peer identity to another, nor a stale By', () => {
    const inbound = compileClientCertHeader({ forward_client_cert_details: 'APPEND_FORWARD', set_current_client_cert_details: { uri: true } });
    const other = { ...peer, sha256: 'cd34', uriSans: ['spiffe://cluster.local/ns/evil/sa/mallory'] };
    const by = 'spiffe://cluster.local/ns/bar/sa/httpbin';
    const sleep = 'By=spiffe://cluster.local/ns/bar/sa/httpbin;Hash=ab12;URI=spiffe://cluster.local/ns/foo/sa/sleep';
    expect(inbound(undefined, { peerCertificate: peer, localUriSan: by })).toBe(sleep);
    expect(inbound(undefined, { peerCertificate: other, localUriSan: by })).toBe(
      'By=spiffe://cluster.local/ns/bar/sa/httpbin;Hash=cd34;URI=spiffe://cluster.local/ns/evil/sa/mallory',
    );
    expect(inbound('By=a', { peerCertificate: peer, localUriSan: by })).toBe(`By=a,${sleep}`);
    // This proxy's own identity rotated: the same peer's element names the new one.
    expect(inbound(undefined, { peerCertificate: peer, localUriSan: 'spiffe://cluster.local/ns/bar/sa/httpbin-v2' })).toBe(
      'By=spiffe://cluster.local/ns/bar/sa/httpbin-v2;Hash=ab12;URI=spiffe://cluster.local/ns/foo/sa/sleep',
    );
    expect(inbound(undefined, { peerCertificate: peer })).toBe('Hash=ab12;URI=spiffe://cluster.local/ns/foo/sa/sleep');
  });
});

describe('upstream TLS', () => {
  const tlsSocket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      sni: 'outbound_.8000_._.httpbin.bar.svc.cluster.local',
      common_tls_context: {
        alpn_protocols: ['h2', 'http/1.1'],
        tls_certificate_sds_secret_configs: [{ name: 'default' }],
        combined_validation_context: {
          default_validation_context: { match_subject_alt_names: [{ exact: 'spiffe://cluster.local/ns/bar/sa/httpbin' }] },
          validation_context_sds_secret_config: { name: 'ROOTCA' },
        },
      },
    },
  };
  const cluster = {
    name: 'outbound|8000||httpbin.bar.svc.cluster.local',
    transport_socket_matches: [
      { name: 'tlsMode-mesh', match: { tlsMode: 'mesh' }, transport_socket: tlsSocket },
      {
        name: 'tlsMode-disabled',
        match: {},
        transport_socket: {
          name: 'envoy.transport_sockets.raw_buffer',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' },
        },
      },
    ],
  };

  test('an endpoint with the sidecar label gets mutual TLS with SNI and an exact SAN check; one without gets plain text', () => {
    const tlsFor = compileUpstreamTls(cluster);
    const meshed = tlsFor({ 'envoy.transport_socket_match': { tlsMode: 'mesh' } });
    expect(meshed.kind).toBe('tls');
    if (meshed.kind !== 'tls') return;
    expect(meshed.sni).toBe('outbound_.8000_._.httpbin.bar.svc.cluster.local');
    expect(meshed.certificateSecrets).toEqual(['default']);
    expect(meshed.validationSecret).toBe('ROOTCA');
    expect(meshed.verifySubjectAltName?.('spiffe://cluster.local/ns/bar/sa/httpbin')).toBe(true);
    expect(meshed.verifySubjectAltName?.('spiffe://cluster.local/ns/bar/sa/other')).toBe(false);
    expect(tlsFor(undefined)).toEqual({ kind: 'plaintext', matchName: 'tlsMode-disabled' });
  });
});

describe('subject alternative names', () => {
  test.each([
    ['a.example.com', '*.example.com', true],
    ['A.Example.COM', '*.example.com', true],
    ['nested.sub.example.com', '*.example.com', false],
    ['example.com', '*.example.com', false],
    ['.example.com', '*.example.com', false],
    ['a.example.com', 'a.example.com', true],
    ['a.example.com', 'b.example.com', false],
    ['a.example.com', 'a.*.com', false],
  ])('expected %s against certificate SAN %s: %s', (expected, san, result) => {
    expect(dnsNameMatches(expected, san)).toBe(result);
  });

  test('exact matchers follow DNS wildcards on DNS SANs only; typed matchers read their type only', () => {
    const untyped = decodeCommonTlsContext({ validation_context: { match_subject_alt_names: [{ exact: 'a.example.com' }] } });
    expect(untyped.verifySubjectAltName?.('*.example.com', 'DNS')).toBe(true);
    expect(untyped.verifySubjectAltName?.('*.example.com', 'URI')).toBe(false);
    const typed = decodeCommonTlsContext({ validation_context: { match_typed_subject_alt_names: [{ san_type: 'URI', matcher: { prefix: 'spiffe://' } }] } });
    expect(typed.verifySubjectAltName?.('spiffe://cluster.local/ns/a/sa/b', 'URI')).toBe(true);
    expect(typed.verifySubjectAltName?.('spiffe://cluster.local/ns/a/sa/b', 'DNS')).toBe(false);
  });
});

describe('regular expressions are RE2: linear in the input, RE2 syntax only', () => {
  // With a backtracking engine, `(a+)+b` against forty `a`s and a `c` takes hours: a client could
  // stall the proxy with one request. RE2 answers at once, whatever the length.
  const attack = `/${'a'.repeat(40)}c`;

  test('a catastrophic pattern in a route, a header and a string matcher answers at once', () => {
    const route = compileRouteMatch({ safe_regex: { regex: '/(a+)+b' } });
    expect(route({ method: 'GET', host: 'h', path: attack, headers: {} })).toBe(false);
    expect(route({ method: 'GET', host: 'h', path: '/aaab', headers: {} })).toBe(true);
    const header = compileHeaderMatcher({ name: 'x-id', safe_regex_match: { regex: '(a|aa)+$' } });
    expect(header({ method: 'GET', host: 'h', path: '/', headers: { 'x-id': `${'a'.repeat(100_000)}!` } })).toBe(false);
    expect(compileStringMatcher({ safe_regex: { regex: '(x+x+)+y' } })('x'.repeat(50_000))).toBe(false);
  });

  test('RE2 semantics: the whole value must match; lookaround and backreferences are refused at compile time', () => {
    expect(compileStringMatcher({ safe_regex: { regex: 'ab' } })('xaby')).toBe(false);
    expect(compileStringMatcher({ safe_regex: { regex: 'a|ab' } })('ab')).toBe(true);
    expect(() => compileStringMatcher({ safe_regex: { regex: '(?=a)a' } })).toThrow(/invalid or unsupported Perl syntax/);
    expect(() => compileStringMatcher({ safe_regex: { regex: '(a)\\1' } })).toThrow(/invalid escape sequence/);
  });
});
