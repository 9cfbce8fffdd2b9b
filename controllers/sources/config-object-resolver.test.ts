import { describe, expect, test } from '@jest/globals';
import { resolveConfigObjects } from './config-object-resolver.js';
import type { KubeObject } from '../../runtime/index.js';

function doc(object: KubeObject, line = 1): { object: KubeObject; line: number; column: number } {
  return { object, line, column: 1 };
}

describe('resolveConfigObjects', () => {
  test.each([
    ['a namespaced core kind', 'v1', 'ConfigMap', undefined, 'default', 'default/x'],
    ['a mesh kind', 'security.mesh.io/v1beta1', 'PeerAuthentication', undefined, 'default', 'default/x'],
    ['an explicit namespace', 'v1', 'Service', 'foo', 'foo', 'foo/x'],
    ['Namespace', 'v1', 'Namespace', undefined, undefined, 'x'],
    ['Namespace with a stray namespace', 'v1', 'Namespace', 'foo', undefined, 'x'],
    ['CustomResourceDefinition', 'apiextensions.k8s.io/v1', 'CustomResourceDefinition', undefined, undefined, 'x'],
  ])('%s: namespace and key', (_name, apiVersion, kind, namespace, wantNamespace, wantKey) => {
    const metadata = namespace === undefined ? { name: 'x' } : { name: 'x', namespace };
    const { objects } = resolveConfigObjects([{ path: '/c/a.yaml', documents: [doc({ apiVersion, kind, metadata })] }]);
    const [byKey] = [...objects.values()];
    const [[key, desired] = []] = [...(byKey ?? new Map())];
    expect(key).toBe(wantKey);
    expect(desired?.normalized.object.metadata?.namespace).toBe(wantNamespace);
  });

  test('the group separates kinds of the same name; versions of one group do not', () => {
    const { objects, conflicts } = resolveConfigObjects([
      {
        path: '/c/a.yaml',
        documents: [
          doc({ apiVersion: 'networking.mesh.io/v1alpha3', kind: 'Gateway', metadata: { name: 'g' } }, 1),
          doc({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'g' } }, 5),
          doc({ apiVersion: 'networking.mesh.io/v1beta1', kind: 'Gateway', metadata: { name: 'g' } }, 9),
        ],
      },
    ]);
    expect([...objects.keys()].sort()).toEqual(['Gateway.gateway.networking.k8s.io', 'Gateway.networking.mesh.io']);
    expect(conflicts).toEqual([
      {
        path: '/c/a.yaml',
        line: 9,
        column: 1,
        reason: 'conflict',
        message: 'Gateway.networking.mesh.io default/g is already defined in /c/a.yaml at line 1; this definition is ignored',
      },
    ]);
  });

  test('content is canonical: key order does not matter', () => {
    const a = resolveConfigObjects([
      { path: '/a', documents: [doc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'm' }, data: { a: '1', b: '2' } })] },
    ]);
    const b = resolveConfigObjects([
      { path: '/b', documents: [doc({ data: { b: '2', a: '1' }, metadata: { name: 'm', namespace: 'default' }, apiVersion: 'v1', kind: 'ConfigMap' })] },
    ]);
    expect(a.objects.get('ConfigMap')?.get('default/m')?.normalized.content).toBe(b.objects.get('ConfigMap')?.get('default/m')?.normalized.content);
  });
});
