import { describe, expect, test } from '@jest/globals';
import { SharedNameLists } from './shared-name-lists.js';

const names = (count: number, tag = ''): string[] =>
  Array.from({ length: count }, (_, i) => `outbound|80||svc-${String(i).padStart(4, '0')}${tag}.ns.svc.cluster.local`);

describe('shared subscriptions', () => {
  test('equal large lists become one frozen array; different ones stay apart', () => {
    const lists = new SharedNameLists();
    const first = lists.share(names(100)).names;
    expect(Object.isFrozen(first)).toBe(true);
    expect(lists.share(names(100)).names).toBe(first);
    expect(lists.share(first).names).toBe(first);
    // Same length, first, middle and last name, one name apart in between.
    const other = names(100);
    other[10] = 'outbound|80||intruder.ns.svc.cluster.local';
    const shared = lists.share(other).names;
    expect(shared).not.toBe(first);
    expect(shared).toEqual(other);
    expect(lists.share(names(100, 'x')).names).toEqual(names(100, 'x'));
  });

  test('small lists are left as they are', () => {
    const small = names(3);
    expect(new SharedNameLists().share(small).names).toBe(small);
  });

  test('bounded: many distinct lists keep giving back their own content', () => {
    const lists = new SharedNameLists();
    for (let i = 0; i < 600; i++) expect(lists.share(names(64 + i)).names).toEqual(names(64 + i));
  });
});
