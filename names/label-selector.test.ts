import { describe, expect, test } from '@jest/globals';
import { labelsMatch, selectorMatches, type UncheckedLabelSelector } from './label-selector.js';

const labels = { app: 'httpbin', version: 'v1' };

describe('labelsMatch (a matchLabels map)', () => {
  test.each<[string, Record<string, string> | undefined, boolean]>([
    ['absent', undefined, true],
    ['empty', {}, true],
    ['one pair held', { app: 'httpbin' }, true],
    ['every pair held', { app: 'httpbin', version: 'v1' }, true],
    ['another value', { app: 'sleep' }, false],
    ['a missing label', { tier: 'web' }, false],
    ['a missing label asked for empty', { tier: '' }, false],
    ['one of two pairs wrong', { app: 'httpbin', version: 'v2' }, false],
  ])('%s', (_name, selector, expected) => {
    expect(labelsMatch(selector, labels)).toBe(expected);
  });

  test('an empty set of labels is matched by an empty selector only', () => {
    expect(labelsMatch({}, {})).toBe(true);
    expect(labelsMatch({ app: 'httpbin' }, {})).toBe(false);
  });
});

describe('selectorMatches (a metav1.LabelSelector)', () => {
  test.each<[string, UncheckedLabelSelector | undefined, boolean]>([
    ['absent', undefined, true],
    ['empty', {}, true],
    ['empty lists', { matchLabels: {}, matchExpressions: [] }, true],
    ['matchLabels held', { matchLabels: { app: 'httpbin' } }, true],
    ['matchLabels with a missing label', { matchLabels: { tier: 'web' } }, false],
    ['In, value listed', { matchExpressions: [{ key: 'version', operator: 'In', values: ['v1', 'v2'] }] }, true],
    ['In, value not listed', { matchExpressions: [{ key: 'version', operator: 'In', values: ['v2'] }] }, false],
    ['In, label missing', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }, false],
    ['In, no values', { matchExpressions: [{ key: 'version', operator: 'In' }] }, false],
    ['NotIn, value listed', { matchExpressions: [{ key: 'version', operator: 'NotIn', values: ['v1'] }] }, false],
    ['NotIn, value not listed', { matchExpressions: [{ key: 'version', operator: 'NotIn', values: ['v2'] }] }, true],
    ['NotIn, label missing', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, true],
    ['Exists, present', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    ['Exists, missing', { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, false],
    ['DoesNotExist, present', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    ['DoesNotExist, missing', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, true],
    ['an unknown operator', { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['httpbin'] }] }, false],
    [
      'matchLabels and expressions, both held',
      { matchLabels: { app: 'httpbin' }, matchExpressions: [{ key: 'version', operator: 'In', values: ['v1'] }] },
      true,
    ],
    [
      'matchLabels held, an expression not',
      { matchLabels: { app: 'httpbin' }, matchExpressions: [{ key: 'version', operator: 'NotIn', values: ['v1'] }] },
      false,
    ],
    ['an expression held, matchLabels not', { matchLabels: { app: 'sleep' }, matchExpressions: [{ key: 'app', operator: 'Exists' }] }, false],
  ])('%s', (_name, selector, expected) => {
    expect(selectorMatches(selector, labels)).toBe(expected);
  });

  test('a label inherited from Object.prototype does not exist', () => {
    expect(selectorMatches({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {})).toBe(false);
    expect(selectorMatches({ matchExpressions: [{ key: 'toString', operator: 'DoesNotExist' }] }, {})).toBe(true);
  });
});
