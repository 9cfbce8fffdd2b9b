import { describe, expect, test } from '@jest/globals';
import { builtinListStrategy } from './list-strategy.js';
import { deepFreeze, isDeeplyFrozen } from './json-value.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const pod = {
  metadata: { finalizers: ['a'], labels: { x: '1' } },
  spec: {
    containers: [
      { name: 'app', image: 'app:1', ports: [{ containerPort: 80, name: 'http' }] },
      { name: 'proxy', image: 'proxy:1' },
    ],
    tolerations: [{ key: 'k' }],
  },
};

describe('applyStrategicMergePatch', () => {
  test.each([
    ['maps merge and null deletes', { metadata: { labels: { x: null, y: '2' } } }, (r: any) => expect(r.metadata.labels).toEqual({ y: '2' })],
    [
      'keyed lists merge by key',
      { spec: { containers: [{ name: 'proxy', image: 'proxy:2' }] } },
      (r: any) => expect(r.spec.containers).toEqual([pod.spec.containers[0], { name: 'proxy', image: 'proxy:2' }]),
    ],
    [
      'new keyed elements are appended',
      { spec: { containers: [{ name: 'init', image: 'i' }] } },
      (r: any) => expect(r.spec.containers.map((c: any) => c.name)).toEqual(['app', 'proxy', 'init']),
    ],
    [
      '$patch: delete removes an element',
      { spec: { containers: [{ name: 'app', $patch: 'delete' }] } },
      (r: any) => expect(r.spec.containers.map((c: any) => c.name)).toEqual(['proxy']),
    ],
    [
      '$setElementOrder reorders',
      { spec: { '$setElementOrder/containers': [{ name: 'proxy' }, { name: 'app' }] } },
      (r: any) => expect(r.spec.containers.map((c: any) => c.name)).toEqual(['proxy', 'app']),
    ],
    ['atomic lists are replaced', { spec: { tolerations: [{ key: 'other' }] } }, (r: any) => expect(r.spec.tolerations).toEqual([{ key: 'other' }])],
    ['finalizers merge as a set', { metadata: { finalizers: ['b', 'a'] } }, (r: any) => expect(r.metadata.finalizers).toEqual(['a', 'b'])],
    ['$deleteFromPrimitiveList', { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, (r: any) => expect(r.metadata.finalizers).toEqual([])],
    ['$patch: replace on a map', { metadata: { labels: { $patch: 'replace', z: '3' } } }, (r: any) => expect(r.metadata.labels).toEqual({ z: '3' })],
    [
      '$retainKeys drops the others',
      { spec: { $retainKeys: ['containers'], containers: [] } },
      (r: any) => expect(Object.keys(r.spec)).toEqual(['containers']),
    ],
    [
      'nested keyed lists merge too',
      { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, protocol: 'TCP' }] }] } },
      (r: any) => expect(r.spec.containers[0].ports).toEqual([{ containerPort: 80, name: 'http', protocol: 'TCP' }]),
    ],
  ])('%s', (_name, patch, check) => {
    const before = JSON.stringify(pod);
    check(applyStrategicMergePatch(pod, patch, builtinListStrategy));
    expect(JSON.stringify(pod)).toBe(before);
  });

  test('what the patch adds is shared when it holds no directives, copied without them (the patch unchanged) when it does', () => {
    const plain = { name: 'sidecar', image: 'proxy:1', env: [{ name: 'A', value: '1' }] };
    const withDirectives = { name: 'init', env: [{ name: 'B', value: '2', drop: null }], $patch: 'merge' };
    const patch = { spec: { containers: [plain, withDirectives] } };
    const before = JSON.stringify(patch);
    const result = applyStrategicMergePatch(pod, patch, builtinListStrategy) as typeof pod;
    const [, , sidecar, init] = result.spec.containers as unknown[];
    expect(sidecar).toBe(plain);
    expect(init).toEqual({ name: 'init', env: [{ name: 'B', value: '2' }] });
    expect(JSON.stringify(patch)).toBe(before);
    // A frozen patch (a remembered render) merges the same.
    const frozen = structuredClone(patch);
    for (const value of [frozen, frozen.spec, frozen.spec.containers, ...frozen.spec.containers, ...frozen.spec.containers.flatMap((c) => c.env)])
      Object.freeze(value);
    expect(applyStrategicMergePatch(pod, frozen, builtinListStrategy)).toEqual(result);
  });

  test('with a place to keep them, a frozen value stripped of its null fields is the same frozen copy merge after merge', () => {
    const init = Object.freeze({ name: 'init', env: null, args: Object.freeze(['a']) });
    const patch = Object.freeze({ spec: Object.freeze({ initContainers: Object.freeze([init]) }) });
    const strippedValues = new WeakMap<object, unknown>();
    const first = applyStrategicMergePatch(pod, patch, builtinListStrategy, { strippedValues }) as { spec: { initContainers: unknown[] } };
    const second = applyStrategicMergePatch(pod, patch, builtinListStrategy, { strippedValues }) as { spec: { initContainers: unknown[] } };
    expect(first.spec.initContainers[0]).toEqual({ name: 'init', args: ['a'] });
    expect(second.spec.initContainers[0]).toBe(first.spec.initContainers[0]);
    expect(Object.isFrozen(first.spec.initContainers[0])).toBe(true);
    const unremembered = applyStrategicMergePatch(pod, patch, builtinListStrategy) as { spec: { initContainers: unknown[] } };
    expect(unremembered.spec.initContainers[0]).toEqual(first.spec.initContainers[0]);
    expect(unremembered.spec.initContainers[0]).not.toBe(first.spec.initContainers[0]);
  });
});

describe('deepFreeze and isDeeplyFrozen', () => {
  test('a value frozen all the way down cannot change; a frozen top over a mutable part can', () => {
    const value = deepFreeze({ a: [1, { b: 'c' }], d: null });
    expect(Object.isFrozen(value.a[1] as object)).toBe(true);
    expect(isDeeplyFrozen(value)).toBe(true);
    expect(isDeeplyFrozen(Object.freeze({ a: { b: 1 } }))).toBe(false);
    expect(isDeeplyFrozen(Object.freeze({ f: () => 1 }))).toBe(false);
    expect(isDeeplyFrozen(Object.freeze(Object.defineProperty({}, 'g', { get: () => Math.random(), enumerable: true })))).toBe(false);
    expect(isDeeplyFrozen(Object.freeze(new Date(0)))).toBe(false);
    expect(isDeeplyFrozen('text')).toBe(true);
  });
});
