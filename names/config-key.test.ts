import { describe, expect, test } from '@jest/globals';
import { formatConfigKey, formatObjectKey } from './config-key.js';

describe('object and config keys', () => {
  test.each([
    [{ namespace: 'foo', name: 'httpbin' }, 'foo/httpbin'],
    [{ namespace: '', name: 'foo' }, 'foo'],
  ])('formatObjectKey(%j) is %s', (key, expected) => {
    expect(formatObjectKey(key)).toBe(expected);
  });

  test.each([
    [{ kind: 'VirtualService', namespace: 'default', name: 'bookinfo' }, 'VirtualService/default/bookinfo'],
    [{ kind: 'Namespace', namespace: '', name: 'foo' }, 'Namespace/foo'],
  ])('formatConfigKey(%j) is %s', (key, expected) => {
    expect(formatConfigKey(key)).toBe(expected);
  });

  test('different objects never share a key', () => {
    const keys = [
      { kind: 'Service', namespace: 'a', name: 'b' },
      { kind: 'Service', namespace: '', name: 'a' },
      { kind: 'Secret', namespace: 'a', name: 'b' },
      { kind: 'Service', namespace: 'b', name: 'a' },
    ];
    expect(new Set(keys.map(formatConfigKey)).size).toBe(keys.length);
    expect(new Set(keys.map(formatObjectKey)).size).toBe(3);
  });
});
