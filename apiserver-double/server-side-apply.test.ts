import { describe, expect, test } from '@jest/globals';
import { fromFieldsV1, leafFields, toFieldsV1 } from './field-set.js';
import { builtinListStrategy } from '../kube-patch/index.js';
import type { WriteContext } from './managed-fields.js';
import { serverSideApply } from './server-side-apply.js';

const ctx = (manager: string): WriteContext => ({ manager, apiVersion: 'apps/v1', time: '2026-01-01T00:00:00Z', lists: builtinListStrategy, scope: 'main' });

const deployment = (containers: Record<string, unknown>[]): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { template: { spec: { containers } } },
});

describe('server-side apply', () => {
  test('two managers own different elements of a keyed list', () => {
    const first = serverSideApply(undefined, deployment([{ name: 'app', image: 'app:1' }]), false, ctx('team-a'));
    if (!first.ok) throw new Error('unexpected conflict');
    const live = { ...first.object, metadata: { ...(first.object['metadata'] as object), managedFields: first.managedFields } };
    const second = serverSideApply(live, deployment([{ name: 'proxy', image: 'proxy:1' }]), false, ctx('team-b'));
    if (!second.ok) throw new Error('unexpected conflict');
    const containers = (second.object['spec'] as any).template.spec.containers as { name: string }[];
    expect(containers.map((c) => c.name)).toEqual(['app', 'proxy']);
    expect(second.managedFields.map((m) => m.manager)).toEqual(['team-a', 'team-b']);
    expect(second.managedFields[1]?.fieldsV1).toEqual({
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"proxy"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
  });

  test('a conflict names the owner and the path inside the keyed element', () => {
    const first = serverSideApply(undefined, deployment([{ name: 'app', image: 'app:1' }]), false, ctx('team-a'));
    if (!first.ok) throw new Error('unexpected conflict');
    const live = { ...first.object, metadata: { ...(first.object['metadata'] as object), managedFields: first.managedFields } };
    const clash = serverSideApply(live, deployment([{ name: 'app', image: 'app:2' }]), false, ctx('team-b'));
    expect(clash).toEqual({ ok: false, conflicts: [{ manager: 'team-a', apiVersion: 'apps/v1', field: '.spec.template.spec.containers[name="app"].image' }] });
    const forced = serverSideApply(live, deployment([{ name: 'app', image: 'app:2' }]), true, ctx('team-b'));
    expect(forced.ok && (forced.object['spec'] as any).template.spec.containers).toEqual([{ name: 'app', image: 'app:2' }]);
  });

  test('FieldsV1 round-trips through path sets', () => {
    const fields = leafFields(deployment([{ name: 'app', image: 'a', ports: [{ containerPort: 80 }] }]), builtinListStrategy, 'main');
    const tree = toFieldsV1(fields.keys());
    expect(fromFieldsV1(tree)).toEqual(new Set(fields.keys()));
  });
});
