import { RE2JS } from 're2js';
/** `envoy.type.matcher.v3.StringMatcher`, as the daemon sends it (snake_case). */
export interface StringMatcherConfig {
  exact?: string;
  prefix?: string;
  suffix?: string;
  contains?: string;
  safe_regex?: { regex: string };
  ignore_case?: boolean;
}

export type StringPredicate = (value: string) => boolean;

/**
 * Compiles a StringMatcher once per config. `safe_regex` must match the whole value, as RE2's
 * full match does in Envoy; `ignore_case` does not apply to regexes.
 */
export function compileStringMatcher(config: StringMatcherConfig): StringPredicate {
  const ignoreCase = config.ignore_case === true;
  const fold = (value: string): string => (ignoreCase ? value.toLowerCase() : value);
  if (config.exact !== undefined) {
    const expected = fold(config.exact);
    return (value) => fold(value) === expected;
  }
  if (config.prefix !== undefined) {
    const prefix = fold(config.prefix);
    return (value) => fold(value).startsWith(prefix);
  }
  if (config.suffix !== undefined) {
    const suffix = fold(config.suffix);
    return (value) => fold(value).endsWith(suffix);
  }
  if (config.contains !== undefined) {
    const part = fold(config.contains);
    return (value) => fold(value).includes(part);
  }
  if (config.safe_regex !== undefined) {
    const regex = compileFullMatchRegex(config.safe_regex.regex);
    return (value) => regex.test(value);
  }
  throw new Error('string matcher sets none of exact, prefix, suffix, contains, safe_regex');
}

/** A compiled regular expression, matched against a whole value. */
export interface FullMatchRegex {
  test(value: string): boolean;
}

/**
 * An RE2 pattern matched against the whole value, by RE2's own rules and in time linear in the
 * value, as Envoy matches `safe_regex`. A JavaScript RegExp backtracks: a pattern such as
 * `/(a+)+b` takes seconds on a request path of thirty `a`s, which would let any client stall the
 * proxy. A pattern RE2 refuses (lookaround, backreferences) throws, naming the problem.
 */
export function compileFullMatchRegex(pattern: string): FullMatchRegex {
  const compiled = RE2JS.compile(pattern);
  return { test: (value) => compiled.matches(value) };
}
