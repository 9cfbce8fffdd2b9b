import { describe, expect, test } from '@jest/globals';
import { validateResource, type TypedResource } from '../../crds/index.js';
import { newConfigStore } from './config-store.js';

function peerAuthentication(namespace: string, name: string, mode: string, extra: Record<string, unknown> = {}): TypedResource {
  const result = validateResource({
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'PeerAuthentication',
    metadata: { name, namespace, resourceVersion: String(extra['resourceVersion'] ?? '1'), ...(extra['labels'] ? { labels: extra['labels'] } : {}) },
    spec: { mtls: { mode } },
  });
  if (!result.resource) throw new Error(JSON.stringify(result.errors));
  return result.resource;
}

describe('config store', () => {
  test('keys by kind, namespace and name, each entry with its resourceVersion and the store version', () => {
    const store = newConfigStore();
    expect(store.version()).toBe(0);
    expect(store.apply(peerAuthentication('foo', 'a', 'STRICT', { resourceVersion: '7' }))).toBe(true);
    expect(store.apply(peerAuthentication('bar', 'a', 'DISABLE'))).toBe(true);
    expect(store.version()).toBe(2);
    const entry = store.get('PeerAuthentication', 'foo', 'a');
    expect(entry).toMatchObject({ kind: 'PeerAuthentication', namespace: 'foo', name: 'a', resourceVersion: '7', version: 1 });
    expect(entry?.resource.spec).toEqual({ mtls: { mode: 'STRICT' } });
    expect(store.get('RequestAuthentication', 'foo', 'a')).toBeUndefined();
    expect(store.get('PeerAuthentication', 'foo', 'b')).toBeUndefined();
  });

  test('the same content is not a change: no write, no new version', () => {
    const store = newConfigStore();
    store.apply(peerAuthentication('foo', 'a', 'STRICT', { resourceVersion: '1' }));
    expect(store.apply(peerAuthentication('foo', 'a', 'STRICT', { resourceVersion: '2' }))).toBe(false);
    expect(store.version()).toBe(1);
    expect(store.get('PeerAuthentication', 'foo', 'a')?.resourceVersion).toBe('1');
    expect(store.apply(peerAuthentication('foo', 'a', 'STRICT', { labels: { team: 'x' } }))).toBe(true);
    expect(store.apply(peerAuthentication('foo', 'a', 'PERMISSIVE', { labels: { team: 'x' } }))).toBe(true);
    expect(store.version()).toBe(3);
    expect(store.get('PeerAuthentication', 'foo', 'a')?.version).toBe(3);
  });

  test('list is sorted by namespace then name, per kind and per namespace, and follows writes', () => {
    const store = newConfigStore();
    for (const [ns, name] of [
      ['foo', 'b'],
      ['bar', 'z'],
      ['foo', 'a'],
    ] as const)
      store.apply(peerAuthentication(ns, name, 'STRICT'));
    const names = (): string[] => store.list('PeerAuthentication').map((e) => `${e.namespace}/${e.name}`);
    expect(names()).toEqual(['bar/z', 'foo/a', 'foo/b']);
    expect(store.list('PeerAuthentication', 'foo').map((e) => e.name)).toEqual(['a', 'b']);
    expect(store.list('PeerAuthentication', 'none')).toEqual([]);
    expect(store.list('Gateway')).toEqual([]);
    store.apply(peerAuthentication('abc', 'x', 'STRICT'));
    expect(names()).toEqual(['abc/x', 'bar/z', 'foo/a', 'foo/b']);
    expect(store.delete('PeerAuthentication', 'foo', 'a')).toBe(true);
    expect(names()).toEqual(['abc/x', 'bar/z', 'foo/b']);
    expect(store.list('PeerAuthentication', 'foo').map((e) => e.name)).toEqual(['b']);
  });

  test('delete bumps the version only when something was stored', () => {
    const store = newConfigStore();
    store.apply(peerAuthentication('foo', 'a', 'STRICT'));
    expect(store.delete('PeerAuthentication', 'foo', 'missing')).toBe(false);
    expect(store.version()).toBe(1);
    expect(store.delete('PeerAuthentication', 'foo', 'a')).toBe(true);
    expect(store.version()).toBe(2);
    expect(store.get('PeerAuthentication', 'foo', 'a')).toBeUndefined();
    expect(store.delete('PeerAuthentication', 'foo', 'a')).toBe(false);
  });
});
