import type { HttpRequestFacts } from './facts.js';
import { compileFullMatchRegex, compileStringMatcher, type StringMatcherConfig, type StringPredicate } from './string-matcher.js';

/** `envoy.config.route.v3.HeaderMatcher` (snake_case). */
export interface HeaderMatcherConfig {
  name: string;
  exact_match?: string;
  prefix_match?: string;
  suffix_match?: string;
  contains_match?: string;
  safe_regex_match?: { regex: string };
  present_match?: boolean;
  string_match?: StringMatcherConfig;
  range_match?: { start: string | number; end: string | number };
  invert_match?: boolean;
  treat_missing_header_as_empty?: boolean;
}

export type RequestPredicate = (request: HttpRequestFacts) => boolean;

/** A header's value as Envoy's matchers read it; pseudo-headers come from the request line. */
export function headerValue(request: HttpRequestFacts, name: string): string | undefined {
  switch (name) {
    case ':method':
      return request.method;
    case ':path':
      return request.path;
    case ':authority':
    case 'host':
      return request.host;
    default:
      return request.headers[name];
  }
}

function valuePredicate(config: HeaderMatcherConfig): StringPredicate | 'present' {
  if (config.string_match) return compileStringMatcher(config.string_match);
  if (config.exact_match !== undefined) return compileStringMatcher({ exact: config.exact_match });
  if (config.prefix_match !== undefined) return compileStringMatcher({ prefix: config.prefix_match });
  if (config.suffix_match !== undefined) return compileStringMatcher({ suffix: config.suffix_match });
  if (config.contains_match !== undefined) return compileStringMatcher({ contains: config.contains_match });
  if (config.safe_regex_match) {
    const regex = compileFullMatchRegex(config.safe_regex_match.regex);
    return (value) => regex.test(value);
  }
  if (config.range_match) {
    const start = Number(config.range_match.start);
    const end = Number(config.range_match.end);
    return (value) => /^-?\d+$/.test(value) && Number(value) >= start && Number(value) < end;
  }
  return 'present';
}

/**
 * The values of a header sent more than once, one by one; undefined when it was sent once or when
 * the filters changed it since (then the joined value is what the request carries).
 */
function individualValues(request: HttpRequestFacts, name: string, joined: string): readonly string[] | undefined {
  const values = request.repeatedHeaders?.[name];
  return values && values.join(',') === joined ? values : undefined;
}

export interface HeaderMatcherOptions {
  /**
   * Match each value of a repeated header on its own, the header matching when any value does
   * (before `invert_match`), as Envoy's RBAC filter since CVE-2026-26308: a DENY on `admin` must
   * see `x-user: guest` + `x-user: admin`, which joined read `guest,admin`. Routes keep the joined value.
   */
  readonly individually?: boolean;
}

/**
 * Compiles a HeaderMatcher. A missing header never matches (inverted or not), unless
 * `treat_missing_header_as_empty`; `present_match: false` matches an absent header.
 */
export function compileHeaderMatcher(config: HeaderMatcherConfig, options: HeaderMatcherOptions = {}): RequestPredicate {
  const name = config.name.toLowerCase();
  const invert = config.invert_match === true;
  const predicate = valuePredicate(config);
  if (predicate === 'present') {
    const wantPresent = config.present_match !== false;
    return (request) => ((headerValue(request, name) !== undefined) === wantPresent) !== invert;
  }
  const missingAsEmpty = config.treat_missing_header_as_empty === true;
  const individually = options.individually === true;
  return (request) => {
    const value = headerValue(request, name) ?? (missingAsEmpty ? '' : undefined);
    if (value === undefined) return false;
    const values = individually ? individualValues(request, name, value) : undefined;
    const matched = values ? values.some(predicate) : predicate(value);
    return matched !== invert;
  };
}
