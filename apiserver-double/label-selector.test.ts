import { describe, expect, test } from '@jest/globals';
import { matchesLabelSelector, parseLabelSelector } from './label-selector.js';
import { StatusError } from './status-error.js';

describe('label selectors', () => {
  test('parses every operator', () => {
    expect(parseLabelSelector('a=1, b==2,c!=3,d in (x, y),e notin(z),f,!g,h>4,i<5,mesh.io/rev=canary')).toEqual([
      { key: 'a', operator: '=', values: ['1'] },
      { key: 'b', operator: '=', values: ['2'] },
      { key: 'c', operator: '!=', values: ['3'] },
      { key: 'd', operator: 'in', values: ['x', 'y'] },
      { key: 'e', operator: 'notin', values: ['z'] },
      { key: 'f', operator: 'exists', values: [] },
      { key: 'g', operator: 'notexists', values: [] },
      { key: 'h', operator: 'gt', values: ['4'] },
      { key: 'i', operator: 'lt', values: ['5'] },
      { key: 'mesh.io/rev', operator: '=', values: ['canary'] },
    ]);
  });

  test.each(['a in b', 'a=1,', '=1', 'a>x', 'a in (b'])('rejects %p with a BadRequest', (selector) => {
    expect(() => parseLabelSelector(selector)).toThrow(StatusError);
  });

  test.each([
    ['a=1', { a: '1' }, true],
    ['a=1', {}, false],
    ['a!=1', {}, true],
    ['a notin (1)', { a: '2' }, true],
    ['!a', { a: '' }, false],
    ['a', { a: '' }, true],
    ['a>4', { a: 'x' }, false],
    ['a<4', { a: '3' }, true],
    ['a=', { a: '' }, true],
  ])('%p matches %p: %p', (selector, labels, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(selector), labels)).toBe(expected);
  });
});
