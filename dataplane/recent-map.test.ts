import { describe, expect, test } from '@jest/globals';
import { recentEntry } from './recent-map.js';

describe('recentEntry', () => {
  test('makes an entry once, keeps the most recently used, and evicts the least recently used beyond the bound', () => {
    const entries = new Map<string, string>();
    const evicted: string[] = [];
    const get = (key: string): string =>
      recentEntry(
        entries,
        key,
        2,
        () => `made ${key}`,
        (value) => evicted.push(value),
      );
    expect(get('a')).toBe('made a');
    get('b');
    expect(get('a')).toBe('made a');
    get('c');
    expect(evicted).toEqual(['made b']);
    expect([...entries.keys()]).toEqual(['a', 'c']);
  });
});
