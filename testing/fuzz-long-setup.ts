import fc from 'fast-check';

// `npm run fuzz`: the same properties as `npm test`, many more runs, a fresh seed each time
// (printed by fast-check with any counterexample, so a find can be replayed).
(globalThis as { meshFuzzLong?: boolean }).meshFuzzLong = true;
fc.configureGlobal({ numRuns: 20_000 });
