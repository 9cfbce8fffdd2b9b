/**
 * Property-based tests ("fuzzing") share these: a fixed seed, so a failure in `npm test` is
 * reproducible, and fast-check's default 100 runs. `npm run fuzz` runs the same properties with
 * many more runs and a fresh seed (testing/fuzz-long-setup.ts configures fast-check globally);
 * every crash it finds becomes a regression case beside the property that found it.
 */
export const FUZZ_SEED = 20261124;

/** The parameters of `fc.assert` in the test suite: the fixed seed, unless `npm run fuzz` asked for its own. */
export function fuzzParameters(): { seed?: number } {
  return (globalThis as { meshFuzzLong?: boolean }).meshFuzzLong === true ? {} : { seed: FUZZ_SEED };
}
