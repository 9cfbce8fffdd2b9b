import { describe, test, expect, jest } from '@jest/globals';
import { validateResource } from './index.js';

const peerAuthentication = (spec: unknown, namespace = 'bar') => ({
  apiVersion: 'security.mesh.io/v1beta1',
  kind: 'PeerAuthentication',
  metadata: { name: 'httpbin', namespace },
  spec,
});

describe('validateResource', () => {
  test.each([
    [null, 'null'],
    [[], 'a list'],
    ['kind: Gateway', '"kind: Gateway"'],
    [undefined, 'nothing'],
  ])('rejects %p, which is not an object', (input, got) => {
    expect(validateResource(input)).toEqual({
      errors: [{ path: '', message: `expected an object with apiVersion, kind, metadata and spec, got ${got}` }],
      warnings: [],
    });
  });

  test('names both an unknown apiVersion and an unknown kind', () => {
    expect(validateResource({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }).errors).toEqual([
      {
        path: 'apiVersion',
        message:
          'unknown apiVersion "v1": expected one of security.mesh.io/v1beta1, security.mesh.io/v1, networking.mesh.io/v1alpha3, networking.mesh.io/v1beta1, networking.mesh.io/v1',
      },
      {
        path: 'kind',
        message:
          'unknown kind "ConfigMap": expected one of AuthorizationPolicy, DestinationRule, Gateway, PeerAuthentication, RequestAuthentication, ServiceEntry, VirtualService, WorkloadEntry, WorkloadGroup',
      },
    ]);
  });

  test('a known kind under the other group names the apiVersion it needs', () => {
    expect(validateResource({ apiVersion: 'networking.mesh.io/v1alpha3', kind: 'PeerAuthentication' }).errors).toEqual([
      {
        path: 'apiVersion',
        message: 'expected security.mesh.io/v1beta1 or security.mesh.io/v1 for kind PeerAuthentication, got "networking.mesh.io/v1alpha3"',
      },
    ]);
    expect(validateResource({ kind: 'Gateway' }).errors).toEqual([
      {
        path: 'apiVersion',
        message: 'expected networking.mesh.io/v1alpha3, networking.mesh.io/v1beta1 or networking.mesh.io/v1 for kind Gateway, got nothing',
      },
    ]);
  });

  test('a missing spec is required', () => {
    const { spec: _spec, ...withoutSpec } = peerAuthentication({});
    expect(validateResource(withoutSpec).errors).toEqual([{ path: 'spec', message: 'required: expected an object' }]);
  });

  test('returns the typed resource only when there are no errors, warnings or not', () => {
    const valid = peerAuthentication({ selector: {}, mtls: { mode: 'STRICT' } });
    const ok = validateResource(valid);
    expect(ok.errors).toEqual([]);
    expect(ok.warnings).toHaveLength(1);
    expect(ok.resource).toEqual(valid);
    expect(ok.resource?.kind).toBe('PeerAuthentication');

    const bad = validateResource(peerAuthentication({ portLevelMtls: { '80': { mode: 'DISABLE' } } }));
    expect(bad.errors).toHaveLength(1);
    expect(bad.resource).toBeUndefined();
  });

  test('asks for the service ports of the selected workloads, in the policy namespace', () => {
    const servicePortsForWorkload = jest.fn((_namespace: string | undefined, _selector: Readonly<Record<string, string>>) => [8080]);
    const result = validateResource(
      peerAuthentication({ selector: { matchLabels: { app: 'httpbin' } }, portLevelMtls: { '8080': { mode: 'DISABLE' }, '9090': {} } }),
      { servicePortsForWorkload },
    );
    expect(servicePortsForWorkload).toHaveBeenCalledWith('bar', { app: 'httpbin' });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual(['spec.portLevelMtls["9090"]']);
  });

  test('says nothing about unbound ports when the service ports are unknown', () => {
    const servicePortsForWorkload = jest.fn(() => undefined);
    const result = validateResource(peerAuthentication({ selector: { matchLabels: { app: 'httpbin' } }, portLevelMtls: { '9090': { mode: 'DISABLE' } } }), {
      servicePortsForWorkload,
    });
    expect(servicePortsForWorkload).toHaveBeenCalledTimes(1);
    expect(result).toMatchObject({ errors: [], warnings: [] });
  });

  test('does not ask for service ports without portLevelMtls', () => {
    const servicePortsForWorkload = jest.fn(() => [80]);
    validateResource(peerAuthentication({ selector: { matchLabels: { app: 'httpbin' } }, mtls: { mode: 'STRICT' } }), {
      servicePortsForWorkload,
    });
    expect(servicePortsForWorkload).not.toHaveBeenCalled();
  });

  test('accepts what a server returns in metadata and status', () => {
    const result = validateResource({
      ...peerAuthentication({ mtls: { mode: 'STRICT' } }),
      metadata: {
        name: 'default',
        namespace: 'foo',
        uid: '6a1b',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2026-11-01T10:00:00Z',
        labels: { team: 'a' },
        annotations: { note: 'x' },
        managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
        finalizers: ['mesh.io/cleanup'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'foo', uid: '1' }],
      },
      status: { conditions: [{ type: 'Reconciled', status: 'True' }] },
    });
    expect(result.errors).toEqual([]);
  });
});
