/** The HCM's path handling options (`normalize_path`, `merge_slashes`, `path_with_escaped_slashes_action`). */
export interface PathNormalizationConfig {
  normalize_path?: boolean | { value: boolean };
  merge_slashes?: boolean;
  path_with_escaped_slashes_action?: string | number;
}

export type NormalizedPath = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly status: 400 };

const UNRESERVED = /^%(2[dD]|2[eE]|3[0-9]|4[1-9a-fA-F]|5[0-9aA]|5[fF]|6[1-9a-fA-F]|7[0-9aA]|7[eE])$/;
const ESCAPE = /^%[0-9a-fA-F]{2}$/;
const HEX_PAIR = /^[0-9a-fA-F]{2}$/;
const ESCAPE_ACTIONS = ['IMPLEMENTATION_SPECIFIC_DEFAULT', 'KEEP_UNCHANGED', 'REJECT_REQUEST', 'UNESCAPE_AND_REDIRECT', 'UNESCAPE_AND_FORWARD'];

/**
 * Decodes the escapes of unreserved characters, as Chromium's canonicalizer (Envoy's) does, nested
 * escapes included: a `%` that started no escape but would start one once its neighbours are
 * decoded (`%%36%31` → `%61`) is written `%25`. Otherwise the result would decode further, and
 * an upstream that decodes it again would see another path than the policies saw (`/%%36%31dmin`
 * reaching it as `/%61dmin`, that is `/admin`).
 */
function decodeUnreserved(path: string): string {
  let out = '';
  const loosePercents: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const escape = path.slice(i, i + 3);
    if (ESCAPE.test(escape)) {
      out += UNRESERVED.test(escape) ? String.fromCharCode(parseInt(escape.slice(1), 16)) : escape;
      i += 2;
      continue;
    }
    if (path[i] === '%') loosePercents.push(out.length);
    out += path[i];
  }
  for (const at of loosePercents.reverse()) {
    if (HEX_PAIR.test(out.slice(at + 1, at + 3))) out = `${out.slice(0, at + 1)}25${out.slice(at + 1)}`;
  }
  return out;
}

function removeDotSegments(path: string): string | undefined {
  const output: string[] = [];
  const segments = path.split('/').slice(1);
  for (const [index, segment] of segments.entries()) {
    const last = index === segments.length - 1;
    if (segment === '.') {
      if (last) output.push('');
    } else if (segment === '..') {
      output.pop();
      if (last) output.push('');
    } else output.push(segment);
  }
  return `/${output.join('/')}`;
}

/**
 * Envoy's path handling before routing and filters: the fragment stripped and `%00` refused
 * always; then, as configured, escaped slashes per the action,
 * RFC 3986 normalization (unreserved percent-escapes decoded, backslashes turned into slashes,
 * dot segments removed), then merged slashes. The query is left alone.
 */
export function compilePathNormalization(config: PathNormalizationConfig): (path: string) => NormalizedPath {
  const normalize = typeof config.normalize_path === 'object' ? config.normalize_path.value : config.normalize_path === true;
  const merge = config.merge_slashes === true;
  const raw = config.path_with_escaped_slashes_action ?? 'KEEP_UNCHANGED';
  const action = typeof raw === 'number' ? (ESCAPE_ACTIONS[raw] ?? 'KEEP_UNCHANGED') : raw;
  return (received) => {
    // The fragment never leaves the proxy, whatever the normalization.
    const hash = received.indexOf('#');
    const full = hash < 0 ? received : received.slice(0, hash);
    const mark = full.indexOf('?');
    let path = mark < 0 ? full : full.slice(0, mark);
    const query = mark < 0 ? '' : full.slice(mark);
    if (!path.startsWith('/')) return { ok: false, status: 400 };
    // An escaped NUL is refused in every mode: backends written in C end the path there.
    if (path.includes('%00')) return { ok: false, status: 400 };
    const hasEscapedSlash = /%2f|%5c/i.test(path);
    if (hasEscapedSlash && action === 'REJECT_REQUEST') return { ok: false, status: 400 };
    if (hasEscapedSlash && (action === 'UNESCAPE_AND_FORWARD' || action === 'UNESCAPE_AND_REDIRECT')) {
      path = path.replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
    }
    if (normalize) {
      path = decodeUnreserved(path).replace(/\\/g, '/');
      const cleaned = removeDotSegments(path);
      if (cleaned === undefined) return { ok: false, status: 400 };
      path = cleaned;
    }
    if (merge) path = path.replace(/\/{2,}/g, '/');
    return { ok: true, path: path + query };
  };
}
