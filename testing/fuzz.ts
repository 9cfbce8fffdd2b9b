/**
 * Property-based tests ("fuzzing") share these: a fixed seed, so a failure in `npm test` is
 * reproducible, and fast-check's default 100 runs. `npm run fuzz` runs the same properties with
 * many more runs and a fresh seed (testing/fuzz-long-setup.ts configures fast-check globally);
 * every crash it finds becomes a regression case beside the property that found it.
 */
export const FUZZ_SEED = 20261124;

/** Run counts other than the defaults, for properties whose runs are costly (sockets, processes). */
export interface FuzzRuns {
  /** Runs in `npm test` (default fast-check's 100). */
  numRuns?: number;
  /** Runs in `npm run fuzz` (default the global 20,000). */
  longRuns?: number;
}

/** The parameters of `fc.assert` in the test suite: the fixed seed, unless `npm run fuzz` asked for its own. */
export function fuzzParameters(runs: FuzzRuns = {}): { seed?: number; numRuns?: number } {
  if ((globalThis as { meshFuzzLong?: boolean }).meshFuzzLong === true) return runs.longRuns === undefined ? {} : { numRuns: runs.longRuns };
  return runs.numRuns === undefined ? { seed: FUZZ_SEED } : { seed: FUZZ_SEED, numRuns: runs.numRuns };
}
