import { describe, expect, test } from '@jest/globals';
import { applyJsonPatch, JsonPatchError } from './json-patch.js';

describe('applyJsonPatch (RFC 6902)', () => {
  test.each([
    ['add to a map', { a: 1 }, [{ op: 'add', path: '/b', value: 2 }], { a: 1, b: 2 }],
    ['add replaces an existing key', { a: 1 }, [{ op: 'add', path: '/a', value: 3 }], { a: 3 }],
    ['add inserts into a list', { l: [1, 3] }, [{ op: 'add', path: '/l/1', value: 2 }], { l: [1, 2, 3] }],
    ['add appends with -', { l: [1] }, [{ op: 'add', path: '/l/-', value: 2 }], { l: [1, 2] }],
    ['remove from a list', { l: [1, 2, 3] }, [{ op: 'remove', path: '/l/0' }], { l: [2, 3] }],
    ['escaped tokens', { 'a/b': { '~c': 1 } }, [{ op: 'replace', path: '/a~1b/~0c', value: 2 }], { 'a/b': { '~c': 2 } }],
    ['move', { a: { x: 1 }, b: {} }, [{ op: 'move', from: '/a/x', path: '/b/y' }], { a: {}, b: { y: 1 } }],
    ['copy', { a: [1] }, [{ op: 'copy', from: '/a', path: '/b' }], { a: [1], b: [1] }],
    ['test passes', { a: { b: [1] } }, [{ op: 'test', path: '/a', value: { b: [1] } }], { a: { b: [1] } }],
    ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }], { b: 2 }],
  ])('%s', (_name, doc, ops, expected) => {
    const before = JSON.stringify(doc);
    expect(applyJsonPatch(doc, ops)).toEqual(expected);
    expect(JSON.stringify(doc)).toBe(before);
  });

  test.each([
    ['remove of a missing key', { a: 1 }, [{ op: 'remove', path: '/b' }]],
    ['replace of a missing key', { a: 1 }, [{ op: 'replace', path: '/b', value: 1 }]],
    ['add under a missing parent', { a: 1 }, [{ op: 'add', path: '/x/y', value: 1 }]],
    ['index out of range', { l: [1] }, [{ op: 'add', path: '/l/5', value: 1 }]],
    ['failed test', { a: 1 }, [{ op: 'test', path: '/a', value: 2 }]],
    ['not a list of operations', { a: 1 }, { op: 'add' }],
    ['unknown op', { a: 1 }, [{ op: 'frobnicate', path: '/a' }]],
  ])('%s fails', (_name, doc, ops) => {
    expect(() => applyJsonPatch(doc, ops)).toThrow(JsonPatchError);
  });
});
