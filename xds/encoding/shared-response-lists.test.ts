import { describe, expect, test } from '@jest/globals';
import type { EncodedResource } from '../generator.js';
import { SharedResponseLists } from './shared-response-lists.js';

const TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function resources(count: number, prefix = 'r'): EncodedResource[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}${i}`,
    version: `${prefix}${i}-version`,
    any: { type_url: TYPE, value: Uint8Array.of(i % 256) },
  }));
}

describe('lists of encoded resources shared by the responses that send them alike', () => {
  test('the same elements in the same order give one frozen list, with its Anys and delta Resources derived once', () => {
    const lists = new SharedResponseLists();
    const elements = resources(40);
    const first = lists.share(TYPE, elements, 40);
    const second = lists.share(TYPE, [...elements], 40);
    expect(first).toBeDefined();
    expect(second).toBe(first);
    expect(Object.isFrozen(first?.resources)).toBe(true);
    expect(first?.resources).toEqual(elements);
    expect(first?.anys).toBe(second?.anys);
    expect(first?.anys).toEqual(elements.map((resource) => resource.any));
    expect(Object.isFrozen(first?.deltaResources[0])).toBe(true);
    expect(first?.deltaResources[3]).toEqual({ name: 'r3', version: 'r3-version', resource: elements[3]?.any });
    // The caller's array may change afterwards: the shared list does not.
    elements.pop();
    expect(first?.resources).toHaveLength(40);
  });

  test('an element of its own, though equal in name, version and bytes, or another order, or another type, is another list', () => {
    const lists = new SharedResponseLists();
    const elements = resources(40);
    const shared = lists.share(TYPE, elements, 40);
    const copy = [...elements];
    copy[17] = { ...(elements[17] as EncodedResource) };
    expect(lists.share(TYPE, copy, 40)).not.toBe(shared);
    const swapped = [...elements];
    [swapped[0], swapped[1]] = [swapped[1] as EncodedResource, swapped[0] as EncodedResource];
    expect(lists.share(TYPE, swapped, 40)).not.toBe(shared);
    expect(lists.share(`${TYPE}X`, elements, 40)).not.toBe(shared);
    expect(lists.share(TYPE, elements, 40)).toBe(shared);
  });

  test('long lists that differ where the key does not look are still told apart, and both kept', () => {
    const lists = new SharedResponseLists();
    const elements = resources(1000);
    const other = [...elements];
    for (const index of [500, 501, 502]) other[index] = { ...(elements[index] as EncodedResource), version: 'other' };
    const first = lists.share(TYPE, elements, 1000);
    const second = lists.share(TYPE, other, 1000);
    expect(second).not.toBe(first);
    expect(second?.resources[501]?.version).toBe('other');
    expect(lists.share(TYPE, [...elements], 1000)).toBe(first);
    expect(lists.share(TYPE, [...other], 1000)).toBe(second);
  });

  test('short lists are not shared', () => {
    expect(new SharedResponseLists().share(TYPE, resources(3), 3)).toBeUndefined();
  });

  test('the lists kept are bounded by their bytes, the least recently used forgotten first', () => {
    const lists = new SharedResponseLists();
    const a = resources(20, 'a');
    const b = resources(20, 'b');
    const c = resources(20, 'c');
    const sharedA = lists.share(TYPE, a, 30 * 1024 * 1024);
    const sharedB = lists.share(TYPE, b, 30 * 1024 * 1024);
    expect(lists.share(TYPE, a, 30 * 1024 * 1024)).toBe(sharedA);
    lists.share(TYPE, c, 30 * 1024 * 1024);
    expect(lists.share(TYPE, a, 30 * 1024 * 1024)).toBe(sharedA);
    expect(lists.share(TYPE, b, 30 * 1024 * 1024)).not.toBe(sharedB);
    expect(lists.share(TYPE, resources(20, 'd'), 65 * 1024 * 1024)).toBeUndefined();
  });
});
