import { describe, expect, test } from '@jest/globals';
import { DAEMON_NAME, INJECTOR_CONFIG_MAP_NAME, revisionLabelValue, revisionedName } from './service-names.js';

describe('revisions in names and labels', () => {
  test.each([
    [undefined, 'default'],
    ['', 'default'],
    ['default', 'default'],
    ['canary', 'canary'],
  ])('revisionLabelValue(%j) is %s', (revision, expected) => {
    expect(revisionLabelValue(revision)).toBe(expected);
  });

  test.each([
    [undefined, 'meshd'],
    ['', 'meshd'],
    ['default', 'meshd'],
    ['canary', 'meshd-canary'],
  ])('the daemon of revision %j is %s', (revision, expected) => {
    expect(revisionedName(DAEMON_NAME, revision)).toBe(expected);
  });

  test('the injector ConfigMap of a revision', () => {
    expect(revisionedName(INJECTOR_CONFIG_MAP_NAME, '')).toBe('mesh-sidecar-injector');
    expect(revisionedName(INJECTOR_CONFIG_MAP_NAME, '1-2')).toBe('mesh-sidecar-injector-1-2');
  });
});
