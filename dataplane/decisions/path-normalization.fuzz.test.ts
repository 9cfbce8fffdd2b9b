import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import { ATTACK_SEGMENTS, envoyPath, hcmPathOptions, MODES, type Mode } from '../testing/envoy-path-model.js';
import { compilePathNormalization } from './path-normalization.js';

// The HCM's path normalization under fuzzing, per mesh-config mode (the HCM options our generator
// emits): never a throw; idempotent (what reaches the upstream normalizes to itself, so an
// upstream that normalizes again cannot see another path than the policies saw); and equal to an
// independent model of Envoy's (Chromium's) canonicalization: the WHATWG URL parser's path
// (backslashes, dot segments, `%2e` spellings) with unreserved escapes decoded.
const normalizers = new Map(MODES.map((mode) => [mode, compilePathNormalization(hcmPathOptions(mode))]));
const normalizer = (mode: Mode) => normalizers.get(mode) as ReturnType<typeof compilePathNormalization>;
const attackPath = fc.array(fc.constantFrom(...ATTACK_SEGMENTS), { minLength: 1, maxLength: 6 }).map((segments) => `/${segments.join('/')}`);
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
