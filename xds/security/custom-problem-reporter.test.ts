import { describe, expect, test } from '@jest/globals';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { newCustomProblemReporter } from './custom-problem-reporter.js';

describe('newCustomProblemReporter', () => {
  test('logs a CUSTOM policy whose provider cannot be used once per distinct problem, at error level', () => {
    const entries: LogEntry[] = [];
    const report = newCustomProblemReporter(newRecordingLogger(entries));
    const problem = { policy: 'foo/ext', provider: 'opa', problem: 'available providers are [envoy] but found "opa"' };
    report(problem);
    report(problem);
    report({ ...problem, problem: 'found errors in provider opa: could not find service opa.foo' });
    expect(entries.map((entry) => [entry.level, entry.message, entry.fields['problem']])).toEqual([
      ['error', 'failed to process CUSTOM action of foo/ext: its rules are denied', problem.problem],
      ['error', 'failed to process CUSTOM action of foo/ext: its rules are denied', 'found errors in provider opa: could not find service opa.foo'],
    ]);
  });
});
