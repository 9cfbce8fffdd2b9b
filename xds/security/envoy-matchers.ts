/**
 * Envoy matcher messages (`envoy.type.matcher.v3`, `envoy.config.core.v3.CidrRange`,
 * `envoy.config.route.v3.HeaderMatcher`) as plain snake_case objects, built from policy values
 * with the mesh's `*` wildcard conventions.
 */

export type StringMatcher =
  | { exact: string; ignore_case?: boolean }
  | { prefix: string; ignore_case?: boolean }
  | { suffix: string; ignore_case?: boolean }
  | { safe_regex: { regex: string } };

export type ValueMatcher = { string_match: StringMatcher } | { list_match: { one_of: ValueMatcher } } | { or_match: { value_matchers: ValueMatcher[] } };

export interface MetadataMatcher {
  filter: string;
  path: { key: string }[];
  value: ValueMatcher;
}

export type HeaderMatcher = { name: string; present_match: true } | { name: string; string_match: StringMatcher };

export interface CidrRange {
  address_prefix: string;
  prefix_len: { value: number };
}

/** RE2 metacharacters escaped, so a user string matches itself only. */
export function escapeRegex(value: string): string {
  return value.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

export function regexMatcher(regex: string): StringMatcher {
  return { safe_regex: { regex } };
}

/**
 * `*` → any non-empty string; `*x` → suffix x; `x*` → prefix x; otherwise exact. With `prefix`
 * (such as `spiffe://`) prepended to the value, a leading `*` needs a regex instead of a suffix.
 */
export function wildcardMatcher(value: string, prefix = '', ignoreCase = false): StringMatcher {
  const withCase = <T extends object>(matcher: T): T => (ignoreCase ? { ...matcher, ignore_case: true } : matcher);
  if (value === '*') return regexMatcher('.+');
  if (value.startsWith('*')) {
    if (prefix === '') return withCase({ suffix: value.slice(1) });
    return regexMatcher(`${escapeRegex(prefix)}.*${escapeRegex(value.slice(1))}`);
  }
  if (value.endsWith('*')) return withCase({ prefix: prefix + value.slice(0, -1) });
  return withCase({ exact: prefix + value });
}

/** `*` → header present; otherwise the wildcard string match on the header value. */
export function headerMatcher(name: string, value: string, ignoreCase = false): HeaderMatcher {
  if (value === '*') return { name, present_match: true };
  return { name, string_match: wildcardMatcher(value, '', ignoreCase) };
}

/** One value, or an OR of several. */
export function orValueMatcher(matchers: ValueMatcher[]): ValueMatcher {
  if (matchers.length === 1) return matchers[0] as ValueMatcher;
  return { or_match: { value_matchers: matchers } };
}

export function stringOrMatcher(values: readonly string[]): ValueMatcher {
  return orValueMatcher(values.map((value) => ({ string_match: wildcardMatcher(value) })));
}

/**
 * A metadata value at `path` under `filter` that is either a list with one matching element or
 * a matching scalar (JWT claims may be either).
 */
export function metadataListMatcher(filter: string, path: readonly string[], value: ValueMatcher): MetadataMatcher {
  return {
    filter,
    path: path.map((key) => ({ key })),
    value: { or_match: { value_matchers: [{ list_match: { one_of: value } }, structuredClone(value)] } },
  };
}

export function metadataMatcher(filter: string, path: readonly string[], value: ValueMatcher): MetadataMatcher {
  return { filter, path: path.map((key) => ({ key })), value };
}

/** `10.0.0.0/16` or a single address (a /32 or /128); undefined when it is neither. */
export function cidrRange(value: string): CidrRange | undefined {
  const slash = value.indexOf('/');
  const address = slash < 0 ? value : value.slice(0, slash);
  const isV4 = /^(\d{1,3})(\.\d{1,3}){3}$/.test(address) && address.split('.').every((octet) => Number(octet) <= 255);
  const isV6 = !isV4 && address.includes(':') && /^[0-9a-fA-F:.]+$/.test(address);
  if (!isV4 && !isV6) return undefined;
  const max = isV4 ? 32 : 128;
  if (slash < 0) return { address_prefix: address, prefix_len: { value: max } };
  const lengthText = value.slice(slash + 1);
  const length = /^\d{1,3}$/.test(lengthText) ? Number(lengthText) : NaN;
  if (!(length >= 0 && length <= max)) return undefined;
  return { address_prefix: address, prefix_len: { value: length } };
}
