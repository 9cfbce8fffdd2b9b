/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, that any CI reader understands.
 * It is written at exit so that it comes after Jest's own summary.
 */
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`;
    process.once('exit', () => process.stdout.write(line));
  }
}
