import { describe, expect, test } from '@jest/globals';
import { parseProxy, type NodeMessage } from './proxy.js';
import { jsonToStruct } from './envoy/struct-json.js';

describe('parseProxy', () => {
  test('parses a sidecar node id and its metadata', () => {
    const proxy = parseProxy({
      id: 'sidecar~10.1.2.3~reviews-v1-abc.bookinfo~bookinfo.svc.cluster.local',
      metadata: jsonToStruct({
        NAMESPACE: 'bookinfo',
        LABELS: { app: 'reviews', version: 'v1' },
        SERVICE_ACCOUNT: 'reviews',
        CLUSTER_ID: 'Kubernetes',
        INSTANCE_IPS: '10.1.2.3,fd00::3',
        MESH_VERSION: '1.2.3',
        GENERATOR: 'grpc',
        NAME: 'reviews-v1-abc',
        INTERCEPTION_MODE: 'REDIRECT',
      }),
      locality: { region: 'r', zone: 'z', sub_zone: 's' },
    });
    expect(proxy).toEqual({
      nodeId: 'sidecar~10.1.2.3~reviews-v1-abc.bookinfo~bookinfo.svc.cluster.local',
      type: 'sidecar',
      id: 'reviews-v1-abc.bookinfo',
      ipAddresses: ['10.1.2.3', 'fd00::3'],
      dnsDomain: 'bookinfo.svc.cluster.local',
      configNamespace: 'bookinfo',
      locality: { region: 'r', zone: 'z', subZone: 's' },
      metadata: expect.objectContaining({
        namespace: 'bookinfo',
        labels: { app: 'reviews', version: 'v1' },
        serviceAccount: 'reviews',
        clusterId: 'Kubernetes',
        instanceIps: ['10.1.2.3', 'fd00::3'],
        meshVersion: '1.2.3',
        generator: 'grpc',
        podName: 'reviews-v1-abc',
        interceptionMode: 'REDIRECT',
      }),
    });
  });

  test.each<[string, NodeMessage, Partial<{ type: string; id: string; ipAddresses: string[]; configNamespace: string }>]>([
    [
      'a gateway',
      { id: 'router~10.0.0.9~gw-1.mesh-system~mesh-system.svc.cluster.local' },
      { type: 'router', id: 'gw-1.mesh-system', configNamespace: 'mesh-system' },
    ],
    [
      'the namespace from the DNS domain without metadata',
      { id: 'sidecar~10.0.0.1~a.ns1~ns1.svc.cluster.local' },
      { configNamespace: 'ns1', ipAddresses: ['10.0.0.1'] },
    ],
    [
      'metadata NAMESPACE over the domain',
      { id: 'sidecar~10.0.0.1~a.ns1~ns1.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'ns2' }) },
      { configNamespace: 'ns2' },
    ],
    ['an IPv6 address', { id: 'sidecar~fd00::1~a.b~b.svc.cluster.local' }, { ipAddresses: ['fd00::1'] }],
    [
      'INSTANCE_IPS over the id address',
      { id: 'sidecar~0.0.0.0~a.b~b.svc.cluster.local', metadata: jsonToStruct({ INSTANCE_IPS: '10.9.9.9' }) },
      { ipAddresses: ['10.9.9.9'] },
    ],
  ])('parses %s', (_case, node, expected) => {
    expect(parseProxy(node)).toMatchObject(expected);
  });

  test.each<[string, NodeMessage | null, RegExp]>([
    ['no node', null, /no node id/],
    ['an empty id', { id: '' }, /no node id/],
    ['three parts', { id: 'sidecar~10.0.0.1~a.b' }, /must have 4 parts/],
    ['five parts', { id: 'sidecar~10.0.0.1~a.b~c~d' }, /must have 4 parts/],
    ['an unknown type', { id: 'waiter~10.0.0.1~a.b~b.svc.cluster.local' }, /unknown proxy type "waiter"/],
    ['a bad address', { id: 'sidecar~not-an-ip~a.b~b.svc.cluster.local' }, /invalid IP address "not-an-ip"/],
    [
      'a bad INSTANCE_IPS entry',
      { id: 'sidecar~10.0.0.1~a.b~b.svc.cluster.local', metadata: jsonToStruct({ INSTANCE_IPS: '10.0.0.1,nope' }) },
      /invalid address "nope" in INSTANCE_IPS/,
    ],
    ['an empty name', { id: 'sidecar~10.0.0.1~~b.svc.cluster.local' }, /empty proxy name/],
  ])('rejects %s', (_case, node, pattern) => {
    expect(() => parseProxy(node)).toThrow(pattern);
    expect(() => parseProxy(node)).toThrow(expect.objectContaining({ code: 'invalid-node' }));
  });
});
