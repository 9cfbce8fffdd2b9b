import type { HttpMatchRequest } from '../../crds/index.js';

type StringMatch = NonNullable<HttpMatchRequest['uri']>;

/** An Envoy `StringMatcher` from a mesh `StringMatch`; undefined when the match names no kind. */
export function envoyStringMatcher(match: StringMatch): object | undefined {
  if (match.exact !== undefined) return { exact: match.exact };
  if (match.prefix !== undefined) return { prefix: match.prefix };
  if (match.regex !== undefined) return { safe_regex: { regex: match.regex } };
  return undefined;
}

/** An Envoy `HeaderMatcher`; a regex of `*` or `.*` means "present", as the reference. */
export function envoyHeaderMatcher(name: string, match: StringMatch, invert = false): Record<string, unknown> {
  const base: Record<string, unknown> = { name };
  if (match.regex === '*' || match.regex === '.*') base['present_match'] = true;
  else {
    const matcher = envoyStringMatcher(match);
    if (matcher) base['string_match'] = matcher;
  }
  if (invert) base['invert_match'] = true;
  return base;
}

/**
 * An Envoy `RouteMatch` from a VirtualService http match (none: `prefix: /`). The path comes from
 * `uri`; `authority`, `scheme` and `method` become pseudo-header matches before the named headers,
 * which are sorted by name, as are query parameters. `port`, `gateways`, `sourceLabels` and
 * `sourceNamespace` select whether the match applies at all (see `matchAppliesTo`).
 */
export function buildRouteMatch(match: HttpMatchRequest | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const uri = match?.uri;
  if (uri?.exact !== undefined) out['path'] = uri.exact;
  else if (uri?.prefix !== undefined) out['prefix'] = uri.prefix;
  else if (uri?.regex !== undefined) out['safe_regex'] = { regex: uri.regex };
  else out['prefix'] = '/';
  if (match?.ignoreUriCase === true) out['case_sensitive'] = false;

  const headers: Record<string, unknown>[] = [];
  if (match?.authority) headers.push(envoyHeaderMatcher(':authority', match.authority));
  if (match?.scheme) headers.push(envoyHeaderMatcher(':scheme', match.scheme));
  if (match?.method) headers.push(envoyHeaderMatcher(':method', match.method));
  for (const [name, value] of sortedEntries(match?.headers)) headers.push(envoyHeaderMatcher(name, value));
  for (const [name, value] of sortedEntries(match?.withoutHeaders)) headers.push(envoyHeaderMatcher(name, value, true));
  if (headers.length > 0) out['headers'] = headers;

  const query = sortedEntries(match?.queryParams).map(([name, value]) => {
    if (value.exact === undefined && value.prefix === undefined && value.regex === undefined) return { name, present_match: true };
    return { name, string_match: envoyStringMatcher(value) };
  });
  if (query.length > 0) out['query_parameters'] = query;
  return out;
}

/** Whether a match applies to a sidecar listening on `port` with these labels, in this namespace. */
export function matchAppliesTo(match: HttpMatchRequest, port: number, labels: Readonly<Record<string, string>>, namespace: string): boolean {
  if (match.port !== undefined && match.port !== port) return false;
  if (match.gateways !== undefined && match.gateways.length > 0 && !match.gateways.includes('mesh')) return false;
  if (match.sourceNamespace !== undefined && match.sourceNamespace !== '' && match.sourceNamespace !== namespace) return false;
  for (const [key, value] of Object.entries(match.sourceLabels ?? {})) if (labels[key] !== value) return false;
  return true;
}

function sortedEntries<V>(record: Readonly<Record<string, V>> | undefined): [string, V][] {
  return Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
