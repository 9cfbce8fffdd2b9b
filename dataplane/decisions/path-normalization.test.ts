import { describe, expect, test } from '@jest/globals';
import { pathNormalizationOptions } from '../../xds/generators/http-connection-manager.js';
import { parseProxyForm } from '../proxy-form.js';
import { compilePathNormalization, type PathNormalizationConfig } from './path-normalization.js';

// The reference's normalization tables (its security integration test), per mesh-config mode, run
// through the HCM options our generator emits for that mode.
type Mode = 'NONE' | 'BASE' | 'MERGE_SLASHES' | 'DECODE_AND_MERGE_SLASHES';
const r = String.raw;
const TABLE: Record<Mode, [string, string][]> = {
  NONE: [
    ['/', '/'],
    ['/app#foo', '/app'],
    ['/app/', '/app/'],
    ['/app/../admin', '/app/../admin'],
    ['/app', '/app'],
    ['/app//', '/app//'],
    ['/app/%2f', '/app/%2f'],
    ['/app%2f/', '/app%2f/'],
    ['/xyz%30..//abc', '/xyz%30..//abc'],
    ['/app/%2E./admin', '/app/%2E./admin'],
    [r`/app\admin`, r`/app\admin`],
    [r`/app/\/\/\admin`, r`/app/\/\/\admin`],
    [r`/%2Fapp%5cadmin%5Cabc`, r`/%2Fapp%5cadmin%5Cabc`],
    [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`],
    ['/app//../admin', '/app//../admin'],
    ['/app//../../admin', '/app//../../admin'],
  ],
  BASE: [
    ['/', '/'],
    ['/app#foo', '/app'],
    ['/app/', '/app/'],
    ['/app/../admin', '/admin'],
    ['/app', '/app'],
    ['/app//', '/app//'],
    ['/app/%2f', '/app/%2f'],
    ['/app%2f/', '/app%2f/'],
    ['/xyz%30..//abc', '/xyz0..//abc'],
    ['/app/%2E./admin', '/admin'],
    [r`/app\admin`, '/app/admin'],
    [r`/app/\/\/\admin`, '/app//////admin'],
    [r`/%2Fapp%5cadmin%5Cabc`, r`/%2Fapp%5cadmin%5Cabc`],
    [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, r`/%5Capp%2f%5c%2F..%2fadmin%5c/abc`],
    ['/app//../admin', '/app/admin'],
    ['/app//../../admin', '/admin'],
  ],
  MERGE_SLASHES: [
    ['/', '/'],
    ['/app#foo', '/app'],
    ['/app/', '/app/'],
    ['/app/../admin', '/admin'],
    ['/app', '/app'],
    ['/app//', '/app/'],
    ['/app/%2f', '/app/%2f'],
    ['/app%2f/', '/app%2f/'],
    ['/xyz%30..//abc', '/xyz0../abc'],
    ['/app/%2E./admin', '/admin'],
    [r`/app\admin`, '/app/admin'],
    [r`/app/\/\/\admin`, '/app/admin'],
    [r`/%2Fapp%5cadmin%5Cabc`, r`/%2Fapp%5cadmin%5Cabc`],
    [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, r`/%5Capp%2f%5c%2F..%2fadmin%5c/abc`],
    ['/app//../admin', '/app/admin'],
    ['/app//../../admin', '/admin'],
  ],
  DECODE_AND_MERGE_SLASHES: [
    ['/', '/'],
    ['/app#foo', '/app'],
    ['/app/', '/app/'],
    ['/app/../admin', '/admin'],
    ['/app', '/app'],
    ['/app//', '/app/'],
    ['/app/%2f', '/app/'],
    ['/app%2f/', '/app/'],
    ['/xyz%30..//abc', '/xyz0../abc'],
    ['/app/%2E./admin', '/admin'],
    [r`/app\admin`, '/app/admin'],
    [r`/app/\/\/\admin`, '/app/admin'],
    [r`/%2Fapp%5cadmin%5Cabc`, '/app/admin/abc'],
    [r`/%5Capp%2f%5c%2F%2e%2e%2fadmin%5c\abc`, '/app/admin/abc'],
    ['/app//../admin', '/app/admin'],
    ['/app//../../admin', '/admin'],
    ['/%c0%2e%c0%2e/admin', '/%c0.%c0./admin'],
    ['/%c0%2fadmin', '/%c0/admin'],
    // Not normalized: encodings a path normalizer must not guess at.
    ...[
      '/0x2e0x2e/admin',
      '/0x2e0x2e0x2fadmin',
      '/%25c0%25ae%25c1%259cadmin',
      '/%252e%252e/admin',
      '/%c1%9cadmin',
      '/%c0%ae%c0%ae/admin',
      '/.../admin',
      '/..;/admin',
      '/admin;a=b/xyz',
      '/admin,a=b/xyz',
      '/ADMIN',
    ].map((path): [string, string] => [path, path]),
  ],
};

const hcm = (mode: Mode): PathNormalizationConfig =>
  pathNormalizationOptions({ pathNormalization: { normalization: mode } } as Parameters<typeof pathNormalizationOptions>[0]) as PathNormalizationConfig;

describe('the reference normalization table, per mode', () => {
  for (const mode of Object.keys(TABLE) as Mode[]) {
    test.each(TABLE[mode])(`${mode}: %s → %s`, (input, expected) => {
      expect(compilePathNormalization(hcm(mode))(input)).toEqual({ ok: true, path: expected });
    });
  }

  test('every percent-encoded byte under DECODE_AND_MERGE_SLASHES: unreserved ones and slashes decoded, the rest kept', () => {
    const unreserved = (byte: number): boolean =>
      [0x2d, 0x2e, 0x2f, 0x5c, 0x5f, 0x7e].includes(byte) || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a);
    const normalize = compilePathNormalization(hcm('DECODE_AND_MERGE_SLASHES'));
    for (let byte = 1; byte <= 0xff; byte++) {
      const input = `/admin%${byte.toString(16).padStart(2, '0')}`;
      const expected = unreserved(byte) ? `/admin${String.fromCharCode(byte)}`.replace('\\', '/') : input;
      expect({ input, out: normalize(input) }).toEqual({ input, out: { ok: true, path: expected } });
    }
  });

  test.each(Object.keys(TABLE) as Mode[])('%s: an escaped NUL is 400 in the path, allowed in the query', (mode) => {
    const normalize = compilePathNormalization(hcm(mode));
    expect(normalize('/admin%00')).toEqual({ ok: false, status: 400 });
    expect(normalize('/a%00b/c')).toEqual({ ok: false, status: 400 });
    expect(normalize('/search?q=%00')).toEqual({ ok: true, path: '/search?q=%00' });
  });

  // Found by path-normalization.fuzz.test.ts: decoding `%36%31` after a loose `%` made a new
  // escape, `/%%36%31dmin` went upstream as `/%61dmin` (an upstream that decodes sees `/admin`,
  // past a DENY on `/admin`). Chromium's canonicalizer, Envoy's, escapes that `%` instead.
  test.each([
    ['BASE', '/%%36%31dmin', '/%2561dmin'],
    ['MERGE_SLASHES', '/%%30%30', '/%2500'],
    ['DECODE_AND_MERGE_SLASHES', '/%%32f', '/%252f'],
    ['DECODE_AND_MERGE_SLASHES', '/%2%66admin', '/%252fadmin'],
    ['BASE', '/%%zz%41', '/%%zzA'],
    ['NONE', '/%%36%31dmin', '/%%36%31dmin'],
  ] as [Mode, string, string][])('%s: a nested escape %s stays escaped: %s', (mode, input, expected) => {
    const normalize = compilePathNormalization(hcm(mode));
    expect(normalize(input)).toEqual({ ok: true, path: expected });
    expect(normalize(expected)).toEqual({ ok: true, path: expected });
  });

  test('the fragment goes, the query stays', () => {
    expect(compilePathNormalization(hcm('NONE'))('/a/../b?x=1#frag')).toEqual({ ok: true, path: '/a/../b?x=1' });
  });
});

describe('absolute-form targets of the outbound capture', () => {
  test.each([
    ['http://httpbin.bar:8000/headers', { host: 'httpbin.bar:8000', port: 8000, path: '/headers' }],
    ['http://HttpBin.Bar/a/../b', { host: 'httpbin.bar', port: 80, path: '/a/../b' }],
    [r`http://h:81/a\b//c#frag`, { host: 'h:81', port: 81, path: r`/a\b//c#frag` }],
    ['http://h?x=1', { host: 'h', port: 80, path: '/?x=1' }],
    ['https://h', { host: 'h', port: 443, path: '/' }],
    ['http://[::1]:9000/x', { host: '[::1]:9000', port: 9000, path: '/x' }],
  ])('%s keeps its path as sent', (target, expected) => {
    expect(parseProxyForm(target)).toEqual(expected);
  });

  test.each(['/relative', 'http://', 'http://user@h/', 'http://h:99999/', 'http://h:x/', 'http://[::1/', 'mailto:x'])('%s is not one', (target) => {
    expect(parseProxyForm(target)).toBeUndefined();
  });
});
