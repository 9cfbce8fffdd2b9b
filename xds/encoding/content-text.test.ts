import { describe, expect, test } from '@jest/globals';
import { contentText } from './content-text.js';

describe('a message content text', () => {
  test('equal messages give equal text; another value another text', () => {
    expect(contentText({ name: 'a', port: 80 })).toBe(contentText({ name: 'a', port: 80 }));
    expect(contentText({ name: 'a', port: 80 })).not.toBe(contentText({ name: 'a', port: 81 }));
  });

  test('values JSON folds together give no key: NaN, the infinities and null all print as null', () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null]) {
      expect(contentText({ weight: value })).toBeUndefined();
    }
  });

  test('what JSON cannot write gives no key', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(contentText(cyclic)).toBeUndefined();
    expect(contentText(undefined)).toBeUndefined();
    expect(contentText(() => 1)).toBeUndefined();
    expect(contentText({ big: 1n })).toBeUndefined();
  });
});
