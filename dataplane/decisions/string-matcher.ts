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

/** An RE2 pattern as a JavaScript regex anchored at both ends (the subset the daemon emits is common to both). */
export function compileFullMatchRegex(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'u');
}
