import { beforeAll, describe, expect, test } from '@jest/globals';
import { SettingsError } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import { parseCertificatesPem, type CertificateInfo } from '../x509/certificate-info.js';
import { parseSpiffeBundleEndpoints } from './spiffe-bundle-endpoints.js';
import { buildSpiffeBundle, parseSpiffeBundle } from './spiffe-bundle.js';
import { newTestAuthority, type TestAuthority } from '../testing/test-authority.js';

describe('SPIFFE_BUNDLE_ENDPOINTS', () => {
  test.each([
    ['', []],
    ['td1|https://bundles.example.com/td1', [{ trustDomain: 'td1', url: 'https://bundles.example.com/td1' }]],
    [
      ' td1 | https://a.example.com:8443/b || east.example|b.example.com/bundle ',
      [
        { trustDomain: 'td1', url: 'https://a.example.com:8443/b' },
        { trustDomain: 'east.example', url: 'https://b.example.com/bundle' },
      ],
    ],
  ])('%j parses', (raw, expected) => {
    expect(parseSpiffeBundleEndpoints(raw)).toEqual(expected);
  });

  test.each([
    ['td1', 'tuple 1 "td1" is not <trust domain>|<URL>'],
    ['td1|https://a|extra', 'is not <trust domain>|<URL>'],
    ['td1|https://a||', 'tuple 2 "" is not <trust domain>|<URL>'],
    ['TD1|https://a', 'has an invalid trust domain'],
    ['|https://a', 'has an invalid trust domain'],
    ['td1|https://a||td1|https://b', 'repeats trust domain td1'],
    ['td1|http://a/bundle', 'must use https'],
    ['td1|https://', 'has an invalid URL'],
  ])('%j is refused with an error naming the setting', (raw, problem) => {
    let error: unknown;
    try {
      parseSpiffeBundleEndpoints(raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as SettingsError).message;
    expect(message).toContain(`for SPIFFE_BUNDLE_ENDPOINTS: expected <trust domain>|<https URL> tuples separated by "||"`);
    expect(message).toContain(problem);
    expect((error as SettingsError).exitCode).toBe(2);
  });
});

describe('SPIFFE bundles', () => {
  let td1: TestAuthority;
  let td1Next: TestAuthority;
  let roots: CertificateInfo[];

  beforeAll(async () => {
    td1 = await newTestAuthority('td1');
    td1Next = await newTestAuthority('td1');
    roots = parseCertificatesPem(td1.rootPem + td1Next.rootPem, 'roots');
  });

  test('a JWK set: x509-svid authorities, refresh hint and sequence; other entries ignored', () => {
    const built = JSON.parse(buildSpiffeBundle(roots, { refreshHintSeconds: 60, sequence: 7 })) as { keys: Record<string, unknown>[] };
    const leaf = td1.workload('spiffe://td1/ns/a/sa/b');
    built.keys.push(
      { kty: 'EC', use: 'jwt-svid', kid: 'k1', crv: 'P-256', x: 'AA', y: 'AA' },
      { kty: 'EC', use: 'x509-svid', x5c: [roots[0]!.der.toString('base64'), roots[1]!.der.toString('base64')] },
      { kty: 'EC', use: 'x509-svid', x5c: ['bm90IGEgY2VydA=='] },
      { kty: 'EC', use: 'x509-svid', x5c: [leaf.der.toString('base64')] },
      { kty: 'oct', use: 'x509-svid', x5c: [roots[0]!.der.toString('base64')] },
      { kty: 'EC', use: 'something-new', x5c: [roots[0]!.der.toString('base64')] },
    );
    const bundle = parseSpiffeBundle(JSON.stringify(built));
    expect(bundle.roots.map((r) => r.pem)).toEqual(roots.map((r) => r.pem));
    expect(bundle.refreshHintMs).toBe(60_000);
    expect(bundle.sequence).toBe(7);
    expect(bundle.ignoredKeys).toBe(6);
  });

  test('PEM certificates are a bundle too', () => {
    const bundle = parseSpiffeBundle(`# td1 roots\n${td1.rootPem}${td1Next.rootPem}`);
    expect(bundle.roots).toHaveLength(2);
    expect(bundle.refreshHintMs).toBeUndefined();
  });

  test.each([
    ['not JSON', '{"keys": ['],
    ['no keys', '{"spiffe_sequence": 1}'],
    ['only JWT keys', '{"keys": [{"kty": "EC", "use": "jwt-svid", "kid": "a"}]}'],
    ['neither JWKS nor PEM', 'hello'],
  ])('%s is refused', (_name, text) => {
    expect(() => parseSpiffeBundle(text)).toThrow(CaError);
  });

  test('a PEM bundle holding a workload certificate is refused', () => {
    expect(() => parseSpiffeBundle(td1.workload('spiffe://td1/ns/a/sa/b').certPem)).toThrow(/not a CA/);
  });
});
