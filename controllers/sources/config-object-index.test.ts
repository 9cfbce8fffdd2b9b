import { describe, expect, test } from '@jest/globals';
import { newConfigObjectIndex } from './config-object-index.js';
import { resolveConfigObjects } from './config-object-resolver.js';
import { type KubeObject } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';

function desired(...objects: KubeObject[]): ReturnType<typeof resolveConfigObjects>['objects'] {
  return resolveConfigObjects([{ path: '/c/a.yaml', documents: objects.map((object) => ({ object, line: 1, column: 1 })) }]).objects;
}

const map = (name: string, value: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { value } });

describe('config object index', () => {
  test('synthetic metadata: resourceVersion and generation move with content, uid and creation time stay', () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    const index = newConfigObjectIndex(clock);
    const first = index.replace(desired(map('a', '1'), map('b', '1')));
    expect(first.get('ConfigMap')?.map((e) => e.type)).toEqual(['apply', 'apply']);
    const a1 = index.get('ConfigMap', { namespace: 'default', name: 'a' });
    expect(a1?.metadata).toMatchObject({ resourceVersion: '1', generation: 1, creationTimestamp: '2026-01-02T03:04:05Z' });

    clock.advance(60_000);
    expect(index.replace(desired(map('a', '1'), map('b', '1'))).size).toBe(0);
    const events = index.replace(desired(map('a', '2'), map('b', '1')));
    expect(events.get('ConfigMap')?.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['apply a']);
    const a2 = index.get('ConfigMap', { namespace: 'default', name: 'a' });
    expect(a2?.metadata).toMatchObject({ resourceVersion: '3', generation: 2, uid: a1?.metadata?.uid, creationTimestamp: '2026-01-02T03:04:05Z' });
    expect(a2?.['data']).toEqual({ value: '2' });
    // The stored copy of an unchanged object is the same one.
    expect(index.get('ConfigMap', { namespace: 'default', name: 'b' })?.metadata?.resourceVersion).toBe('2');
  });

  test('a vanished object is deleted once with its last copy; coming back is a new object with the same uid', () => {
    const clock = new FakeClock();
    const index = newConfigObjectIndex(clock);
    index.replace(desired(map('a', '1')));
    const before = index.get('ConfigMap', { namespace: 'default', name: 'a' });
    const gone = index.replace(desired());
    expect(gone.get('ConfigMap')).toEqual([{ type: 'delete', object: before }]);
    expect(index.replace(desired()).size).toBe(0);
    expect(index.list('ConfigMap')).toEqual([]);
    clock.advance(5_000);
    index.replace(desired(map('a', '1')));
    const back = index.get('ConfigMap', { namespace: 'default', name: 'a' });
    expect(back?.metadata?.uid).toBe(before?.metadata?.uid);
    expect(back?.metadata?.generation).toBe(1);
    expect(back?.metadata?.creationTimestamp).not.toBe(before?.metadata?.creationTimestamp);
  });
});
