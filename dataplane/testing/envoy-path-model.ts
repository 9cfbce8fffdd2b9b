/**
 * Test support: what Envoy forwards for a path under each mesh-config path normalization mode,
 * modelled apart from our implementation (dataplane/decisions/path-normalization.ts) on the WHATWG
 * URL parser, whose path rules (backslashes, dot segments, `%2e` spellings) are Chromium's, the
 * canonicalizer Envoy uses. Not exported from index.ts.
 */
import { pathNormalizationOptions } from '../../xds/generators/http-connection-manager.js';
import type { PathNormalizationConfig } from '../decisions/index.js';

export type Mode = 'NONE' | 'BASE' | 'MERGE_SLASHES' | 'DECODE_AND_MERGE_SLASHES';
export const MODES: readonly Mode[] = ['NONE', 'BASE', 'MERGE_SLASHES', 'DECODE_AND_MERGE_SLASHES'];

/** The HCM options our generator emits for `mode`. */
export function hcmPathOptions(mode: Mode): PathNormalizationConfig {
  return pathNormalizationOptions({ pathNormalization: { normalization: mode } } as Parameters<typeof pathNormalizationOptions>[0]) as PathNormalizationConfig;
}

const UNRESERVED_ESCAPE = /%(?:2[dDeE]|3[0-9]|4[1-9a-fA-F]|5[0-9aA]|5[fF]|6[1-9a-fA-F]|7[0-9aA]|7[eE])/g;

/** Chromium's unescaping: decode unreserved escapes, then escape each `%` that was loose before and starts an escape now. */
function decodeUnreservedModel(path: string): string {
  const parts = path.split(/(%[0-9a-fA-F]{2})/);
  const marked = parts.map((part) =>
    part.startsWith('%') && part.length === 3
      ? part.replace(UNRESERVED_ESCAPE, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)))
      : part.replace(/%/g, '\uE000'),
  );
  return marked
    .join('')
    .replace(/\uE000(?=[0-9a-fA-F]{2})/g, '%25')
    .replace(/\uE000/g, '%');
}

/** What Envoy forwards for `path` (a path without query, fragment or `%00`, of characters the URL parser keeps as they are) in `mode`. */
export function envoyPath(mode: Mode, path: string): string {
  if (mode === 'NONE') return path;
  let input = path;
  if (mode === 'DECODE_AND_MERGE_SLASHES') input = input.replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
  const canonical = decodeUnreservedModel(new URL(`http://h${input}`).pathname);
  return mode === 'BASE' ? canonical : canonical.replace(/\/{2,}/g, '/');
}

/** Segments attacks on a path policy are made of: dots in every spelling, slashes escaped and not, escapes of letters. */
export const ATTACK_SEGMENTS: readonly string[] = [
  'admin',
  'ADMIN',
  'a',
  '.',
  '..',
  '',
  '%61dmin',
  '%41DMIN',
  '%2e',
  '%2E',
  '.%2e',
  '%2e%2e',
  '%2E.',
  '%2f',
  '%2F',
  '%5c',
  '%5C',
  '\\',
  'admin\\',
  '%7e',
  '~',
  '%25',
  '%2561',
  '%%36%31dmin',
  '%%32f',
  'x;y',
  '%c0%ae',
  '%30',
  'A-_.',
];
