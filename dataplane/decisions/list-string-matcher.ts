import { compileStringMatcher, type StringMatcherConfig } from './string-matcher.js';
import { errorMessage } from '../../runtime/index.js';

/** `envoy.type.matcher.v3.ListStringMatcher`: at least one pattern; a value matches when any does. */
export interface ListStringMatcherConfig {
  patterns?: StringMatcherConfig[];
}

export function compileListStringMatcher(config: ListStringMatcherConfig): (value: string) => boolean {
  const patterns = config.patterns ?? [];
  if (patterns.length === 0) throw new Error('patterns: needs at least one pattern');
  const predicates = patterns.map((pattern, index) => {
    try {
      return compileStringMatcher(pattern);
    } catch (error) {
      throw new Error(`patterns[${index}]: ${errorMessage(error)}`, { cause: error });
    }
  });
  return (value) => predicates.some((matches) => matches(value));
}
