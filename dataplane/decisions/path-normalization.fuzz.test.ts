import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import { pathNormalizationOptions } from '../../xds/generators/http-connection-manager.js';
import { compilePathNormalization, type PathNormalizationConfig } from './path-normalization.js';

// The HCM's path normalization under fuzzing, per mesh-config mode (the HCM options our generator
// emits): never a throw; idempotent (what reaches the upstream normalizes to itself, so an
// upstream that normalizes again cannot see another path than the policies saw); and equal to an
// independent model of Envoy's (Chromium's) canonicalization: the WHATWG URL parser's path
// (backslashes, dot segments, `%2e` spellings) with unreserved escapes decoded.
export type Mode = 'NONE' | 'BASE' | 'MERGE_SLASHES' | 'DECODE_AND_MERGE_SLASHES';
export const MODES: readonly Mode[] = ['NONE', 'BASE', 'MERGE_SLASHES', 'DECODE_AND_MERGE_SLASHES'];

const hcm = (mode: Mode): PathNormalizationConfig => pathNormalizationOptions({ pathNormalization: { normalization: mode } } as Parameters<typeof pathNormalizationOptions>[0]) as PathNormalizationConfig;
const normalizers = new Map(MODES.map((mode) => [mode, compilePathNormalization(hcm(mode))]));
const normalizer = (mode: Mode) => normalizers.get(mode) as (path: string) => ReturnType<ReturnType<typeof compilePathNormalization>>;

const UNRESERVED_ESCAPE = /%(?:2[dDeE]|3[0-9]|4[1-9a-fA-F]|5[0-9aA]|5[fF]|6[1-9a-fA-F]|7[0-9aA]|7[eE])/g;

/** Chromium's unescaping, written apart from ours: decode, then escape each `%` that was loose before and starts an escape now. */
function decodeUnreservedModel(path: string): string {
  const parts = path.split(/(%[0-9a-fA-F]{2})/);
  const marked = parts.map((part) => (part.startsWith('%') && part.length === 3 ? part.replace(UNRESERVED_ESCAPE, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16))) : part.replace(/%/g, '\uE000')));
  return marked.join('').replace(/\uE000(?=[0-9a-fA-F]{2})/g, '%25').replace(/\uE000/g, '%');
}

/** The model: what Envoy forwards for `path` (no query, no fragment, no `%00`) in `mode`. */
export function envoyPath(mode: Mode, path: string): string {
  if (mode === 'NONE') return path;
  let input = path;
  if (mode === 'DECODE_AND_MERGE_SLASHES') input = input.replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
  const canonical = decodeUnreservedModel(new URL(`http://h${input}`).pathname);
  return mode === 'BASE' ? canonical : canonical.replace(/\/{2,}/g, '/');
}

/** Segments the attacks are made of: dots in every spelling, slashes escaped and not, escapes of letters. */
const SEGMENTS = ['admin', 'ADMIN', 'a', '.', '..', '', '%61dmin', '%41DMIN', '%2e', '%2E', '.%2e', '%2e%2e', '%2E.', '%2f', '%2F', '%5c', '%5C', '\\', 'admin\\', '%7e', '~', '%25', '%2561', '%%36%31dmin', '%%32f', 'x;y', '%c0%ae', '%30', 'A-_.'];
const attackPath = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join('/')}`);
/** Anything a request target could carry, starting with a slash. */
const anyPath = fc.string({ unit: fc.constantFrom(...'/\\.%2eEfF5cC%0a1AdDmin?#;~'.split('')), maxLength: 24 }).map((tail) => `/${tail}`);
const RUNS = { numRuns: 2000 };

describe('path normalization under fuzzing', () => {
  test.each(MODES)('%s: never throws, and the result normalizes to itself', (mode) => {
    const normalize = normalizer(mode);
    fc.assert(
      fc.property(fc.oneof(anyPath, attackPath, fc.string({ unit: 'binary', maxLength: 30 })), (path) => {
        const once = normalize(path);
        if (!once.ok) return;
        expect(normalize(once.path)).toEqual(once);
      }),
      fuzzParameters(RUNS),
    );
  });

  test.each(MODES)('%s: the model of Envoy gives the same path', (mode) => {
    const normalize = normalizer(mode);
    fc.assert(
      fc.property(attackPath, (path) => {
        expect(normalize(path)).toEqual({ ok: true, path: envoyPath(mode, path) });
      }),
      fuzzParameters(RUNS),
    );
  });

  test.each(MODES)('%s: an escaped NUL is refused, the query kept as sent', (mode) => {
    const normalize = normalizer(mode);
    fc.assert(
      fc.property(attackPath, attackPath, fc.string({ maxLength: 10 }), (before, after, query) => {
        expect(normalize(`${before}%00${after}`)).toEqual({ ok: false, status: 400 });
        const clean = `${before}${after}`;
        const q = `?${query.replace(/#/g, '')}`;
        expect(normalize(clean + q)).toEqual({ ok: true, path: envoyPath(mode, clean) + q });
      }),
      fuzzParameters(RUNS),
    );
  });
});
