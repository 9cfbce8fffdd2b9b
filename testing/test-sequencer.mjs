// Jest's order, with one change for a run without timings (a fresh clone, as CI runs): jest then
// orders by file size, but the suites that start the built programs (under `e2e/` and `cli/`) are
// the long ones whatever their size, and one of them started last leaves a core idle while it
// runs. They go first; with timings, jest's own order (longest first) stands.
import Sequencer from '@jest/test-sequencer';

const STARTS_PROGRAMS = /\/(e2e|cli)\//;

export default class ProgramsFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const failed = sorted.filter((test) => this.hasFailed(test));
    const rest = sorted.filter((test) => !this.hasFailed(test));
    const untimed = rest.filter((test) => this.time(test) === undefined);
    const timed = rest.filter((test) => this.time(test) !== undefined);
    return [...failed, ...untimed.filter((test) => STARTS_PROGRAMS.test(test.path)), ...untimed.filter((test) => !STARTS_PROGRAMS.test(test.path)), ...timed];
  }
}
