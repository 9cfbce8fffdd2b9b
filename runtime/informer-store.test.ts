import { describe, expect, test } from '@jest/globals';
import { newInformerStore } from './informer-store.js';
import type { KubeObject } from './source.js';

function cm(name: string, resourceVersion: string, namespace = 'default'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion } };
}

describe('newInformerStore', () => {
  test('apply adds and updates, skipping a copy with the same resourceVersion', () => {
    const store = newInformerStore<KubeObject>();
    expect(store.apply(cm('a', '1'))).toEqual({ type: 'apply', object: cm('a', '1') });
    expect(store.apply(cm('a', '1'))).toBeUndefined();
    expect(store.apply(cm('a', '2'))).toEqual({ type: 'apply', object: cm('a', '2') });
    expect(store.get({ namespace: 'default', name: 'a' })).toEqual(cm('a', '2'));
    expect(store.list()).toHaveLength(1);
  });

  test('delete emits once and only for stored objects', () => {
    const store = newInformerStore<KubeObject>();
    store.apply(cm('a', '1'));
    expect(store.delete(cm('a', '3'))).toEqual({ type: 'delete', object: cm('a', '3') });
    expect(store.delete(cm('a', '3'))).toBeUndefined();
    expect(store.delete(cm('never', '1'))).toBeUndefined();
    expect(store.get({ namespace: 'default', name: 'a' })).toBeUndefined();
  });

  test('keys are namespace and name; cluster-scoped objects have no namespace', () => {
    const store = newInformerStore<KubeObject>();
    store.apply(cm('a', '1', 'x'));
    store.apply(cm('a', '1', 'y'));
    store.apply({ kind: 'Namespace', metadata: { name: 'a', resourceVersion: '1' } });
    expect(store.list()).toHaveLength(3);
    expect(store.get({ namespace: '', name: 'a' })?.kind).toBe('Namespace');
    expect(store.get({ namespace: 'y', name: 'a' })?.metadata?.namespace).toBe('y');
  });

  test('replace swaps the snapshot at once and reports only differences', () => {
    const store = newInformerStore<KubeObject>();
    store.replace([cm('same', '1'), cm('changed', '1'), cm('gone', '1')]);
    const events = store.replace([cm('same', '1'), cm('changed', '5'), cm('new', '6')]);
    expect(events).toEqual([
      { type: 'apply', object: cm('changed', '5') },
      { type: 'apply', object: cm('new', '6') },
      { type: 'delete', object: cm('gone', '1') },
    ]);
    expect(
      store
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['changed', 'new', 'same']);
  });

  test('objects without a resourceVersion always count as changed', () => {
    const store = newInformerStore<KubeObject>();
    const bare: KubeObject = { metadata: { name: 'a', namespace: 'n' } };
    store.apply(bare);
    expect(store.apply(bare)).toEqual({ type: 'apply', object: bare });
    expect(store.replace([bare])).toEqual([{ type: 'apply', object: bare }]);
  });
});
