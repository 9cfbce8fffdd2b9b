import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import type { HttpRequestFacts } from './facts.js';
import { compileHeaderMatcher, type HeaderMatcherConfig } from './header-matcher.js';
import { compileRouteMatch, type RouteMatchConfig } from './route-match.js';
import { errorMessage } from '../../runtime/index.js';

// Route and header matchers under fuzzing: whatever a route or a header matcher holds (a regex
// RE2 refuses, odd names, a range of non-numbers), compiling either succeeds or throws; a compiled
// matcher answers true or false for any request (repeated headers, odd paths, huge values), never
// throws. The regexes are RE2's, so no input makes a match slow.
const text = fc.string({ unit: fc.constantFrom(...'/aA.*+?()[]{}|\\^$-_:%20xyz'.split('')), maxLength: 16 });
const stringMatch = fc.oneof(
  fc.record({ exact: text }),
  fc.record({ prefix: text }),
  fc.record({ suffix: text }),
  fc.record({ contains: text }),
  fc.record({ safe_regex: fc.record({ regex: text }) }),
);
const headerMatcher: fc.Arbitrary<HeaderMatcherConfig> = fc.record(
  {
    name: fc.constantFrom(':path', ':authority', ':method', 'x-id', 'X-ID', 'authorization', 'cookie'),
    exact_match: text,
    safe_regex_match: fc.record({ regex: text }),
    range_match: fc.record({ start: fc.oneof(fc.integer(), text), end: fc.oneof(fc.integer(), text) }),
    present_match: fc.boolean(),
    string_match: stringMatch,
    invert_match: fc.boolean(),
    treat_missing_header_as_empty: fc.boolean(),
  },
  { requiredKeys: ['name'] },
) as fc.Arbitrary<HeaderMatcherConfig>;
const routeMatch: fc.Arbitrary<RouteMatchConfig> = fc
  .tuple(
    fc.oneof(
      fc.record({ prefix: text }),
      fc.record({ path: text }),
      fc.record({ path_separated_prefix: text }),
      fc.record({ safe_regex: fc.record({ regex: text }) }),
    ),
    fc.record(
      {
        case_sensitive: fc.boolean(),
        headers: fc.array(headerMatcher, { maxLength: 3 }),
        query_parameters: fc.array(fc.record({ name: text, string_match: stringMatch }, { requiredKeys: ['name'] }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([path, rest]) => ({ ...path, ...rest }) as RouteMatchConfig);
const request: fc.Arbitrary<HttpRequestFacts> = fc.record(
  {
    method: fc.constantFrom('GET', 'POST', 'get', ''),
    host: text,
    path: fc.oneof(
      text,
      text.map((t) => `/${t}?${t}=${t}`),
      fc.constant(`/${'a'.repeat(5000)}c`),
    ),
    headers: fc.dictionary(fc.constantFrom('x-id', 'authorization', 'cookie', 'x-other'), fc.oneof(text, fc.constant('a'.repeat(20_000)))),
    repeatedHeaders: fc.dictionary(fc.constantFrom('x-id', 'cookie'), fc.array(text, { maxLength: 3 })),
  },
  { requiredKeys: ['method', 'host', 'path', 'headers'] },
);

function compiles<T>(compile: () => T): T | undefined {
  try {
    return compile();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    expect(errorMessage(error)).not.toBe('');
    return undefined;
  }
}

describe('route and header matchers under fuzzing', () => {
  test('a route match compiles or is refused with a reason, and then answers any request with a boolean', () => {
    fc.assert(
      fc.property(routeMatch, fc.array(request, { minLength: 1, maxLength: 4 }), (config, requests) => {
        const matches = compiles(() => compileRouteMatch(config));
        if (matches) for (const facts of requests) expect(typeof matches(facts)).toBe('boolean');
      }),
      fuzzParameters({ numRuns: 300, longRuns: 20_000 }),
    );
  });

  test('a header matcher compiles or is refused with a reason, and then answers any request with a boolean', () => {
    fc.assert(
      fc.property(headerMatcher, fc.array(request, { minLength: 1, maxLength: 4 }), (config, requests) => {
        const matches = compiles(() => compileHeaderMatcher(config));
        if (matches) for (const facts of requests) expect(typeof matches(facts)).toBe('boolean');
      }),
      fuzzParameters({ numRuns: 300, longRuns: 20_000 }),
    );
  });
});
