import { describe, test, expect } from '@jest/globals';
import { IssueSink, renderPath } from './validation-issue.js';

describe('renderPath', () => {
  test.each([
    [[], ''],
    [['spec'], 'spec'],
    [['spec', 'rules', 0, 'from', 1, 'source', 'principals', 2], 'spec.rules[0].from[1].source.principals[2]'],
    [['spec', 'portLevelMtls', '8080'], 'spec.portLevelMtls["8080"]'],
    [['spec', 'selector', 'matchLabels', 'app.kubernetes.io/name'], 'spec.selector.matchLabels["app.kubernetes.io/name"]'],
    [['spec', 'selector', 'matchLabels', ''], 'spec.selector.matchLabels[""]'],
    [[0, 'a'], '[0].a'],
  ] as const)('%p renders as %p', (path, rendered) => {
    expect(renderPath(path)).toBe(rendered);
  });

  test('the sink keeps errors and warnings apart', () => {
    const sink = new IssueSink();
    sink.error(['spec', 'host'], 'expected a host');
    sink.warn(['spec'], 'looks odd');
    expect(sink.errors).toEqual([{ path: 'spec.host', message: 'expected a host' }]);
    expect(sink.warnings).toEqual([{ path: 'spec', message: 'looks odd' }]);
  });
});
