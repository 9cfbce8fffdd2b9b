import type { DynamicMetadata } from './facts.js';
import { compileStringMatcher, type StringMatcherConfig } from './string-matcher.js';

/** `envoy.type.matcher.v3.ValueMatcher`. */
export interface ValueMatcherConfig {
  string_match?: StringMatcherConfig;
  list_match?: { one_of: ValueMatcherConfig };
  or_match?: { value_matchers: ValueMatcherConfig[] };
  present_match?: boolean;
  bool_match?: boolean;
  null_match?: object;
  double_match?: { exact?: number; range?: { start: number; end: number } };
}

/** `envoy.type.matcher.v3.MetadataMatcher`. */
export interface MetadataMatcherConfig {
  filter: string;
  path: { key: string }[];
  value: ValueMatcherConfig;
  invert?: boolean;
}

type ValuePredicate = (value: unknown) => boolean;

export function compileValueMatcher(config: ValueMatcherConfig): ValuePredicate {
  if (config.string_match) {
    const predicate = compileStringMatcher(config.string_match);
    return (value) => typeof value === 'string' && predicate(value);
  }
  if (config.list_match) {
    const element = compileValueMatcher(config.list_match.one_of);
    return (value) => Array.isArray(value) && value.some(element);
  }
  if (config.or_match) {
    const any = config.or_match.value_matchers.map(compileValueMatcher);
    return (value) => any.some((predicate) => predicate(value));
  }
  if (config.present_match !== undefined) {
    const want = config.present_match;
    return (value) => (value !== undefined) === want;
  }
  if (config.bool_match !== undefined) {
    const want = config.bool_match;
    return (value) => value === want;
  }
  if (config.null_match !== undefined) return (value) => value === null;
  if (config.double_match) {
    const { exact, range } = config.double_match;
    return (value) => typeof value === 'number' && (exact !== undefined ? value === exact : range !== undefined && value >= range.start && value < range.end);
  }
  throw new Error('value matcher sets no match');
}

/** Compiles a MetadataMatcher over the dynamic metadata of a request. */
export function compileMetadataMatcher(config: MetadataMatcherConfig): (metadata: DynamicMetadata) => boolean {
  const predicate = compileValueMatcher(config.value);
  const keys = config.path.map((segment) => segment.key);
  const invert = config.invert === true;
  return (metadata) => {
    let value: unknown = metadata[config.filter];
    for (const key of keys) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
    }
    return predicate(value) !== invert;
  };
}
