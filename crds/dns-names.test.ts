import { describe, test, expect } from '@jest/globals';
import { hostNameProblem, hostsOverlap, isDns1123Label, isDns1123Subdomain, isHostSubsetOf } from './dns-names.js';

describe('DNS-1123 names', () => {
  test.each([
    ['default', true, true],
    ['a', true, true],
    ['mesh-system', true, true],
    ['my.policy', false, true],
    ['Default', false, false],
    ['-a', false, false],
    ['a-', false, false],
    ['a_b', false, false],
    ['', false, false],
    ['a'.repeat(63), true, true],
    ['a'.repeat(64), false, true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, false, true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, false, false],
  ])('%p: label %p, subdomain %p', (name, label, subdomain) => {
    expect(isDns1123Label(name)).toBe(label);
    expect(isDns1123Subdomain(name)).toBe(subdomain);
  });
});

describe('host names', () => {
  test.each(['reviews', 'reviews.default.svc.cluster.local', '*', '*.example.com', '*foo.example.com', 'API.Example.com', 'example.com.'])(
    'accepts %p',
    (host) => {
      expect(hostNameProblem(host)).toBeUndefined();
    },
  );

  test.each([
    ['', 'expected a non-empty host name'],
    ['foo.*.com', `expected a DNS name whose labels use letters, digits and '-', got "foo.*.com" (label "*" is invalid)`],
    ['f*o.com', `expected a DNS name whose first label may be a wildcard (such as *.example.com), got "f*o.com" (label "f*o" is invalid)`],
    ['example.123', 'expected a DNS name whose top-level label is not all digits, got "example.123"'],
    ['a..b', `expected a DNS name whose labels use letters, digits and '-', got "a..b" (label "" is invalid)`],
  ])('rejects %p', (host, problem) => {
    expect(hostNameProblem(host)).toBe(problem);
  });

  test('wildcard hosts cover their subdomains', () => {
    expect(isHostSubsetOf('api.example.com', '*.example.com')).toBe(true);
    expect(isHostSubsetOf('*.api.example.com', '*.example.com')).toBe(true);
    expect(isHostSubsetOf('example.com', '*.example.com')).toBe(false);
    expect(isHostSubsetOf('anything', '*')).toBe(true);
    expect(isHostSubsetOf('*.example.com', 'api.example.com')).toBe(false);
    expect(hostsOverlap('*.example.com', 'api.example.com')).toBe(true);
    expect(hostsOverlap('a.example.com', 'b.example.com')).toBe(false);
  });
});
