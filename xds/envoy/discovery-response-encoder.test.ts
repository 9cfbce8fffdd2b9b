import { describe, expect, test } from '@jest/globals';
import { newDiscoveryResponseEncoder } from './discovery-response-encoder.js';
import { loadEnvoyProtos } from './envoy-protos.js';
import { CLUSTER_TYPE } from './type-urls.js';

const protos = loadEnvoyProtos();
const cluster = protos.encodeAny(CLUSTER_TYPE, { name: 'outbound|80||a.ns.svc.cluster.local', type: 'EDS', connect_timeout: { seconds: 1 } });
const controlPlane = { identifier: '{"Component":"meshd"}' };

function viaProtobufjs(typeName: string, message: object): Uint8Array {
  const type = protos.lookupType(typeName);
  return type.encode(type.fromObject(message)).finish();
}

describe('the discovery response fast path', () => {
  const encoder = newDiscoveryResponseEncoder();

  test('state of the world: the same message protobufjs would encode', () => {
    const message = {
      version_info: '2026-11-22T10:00:00Z/7',
      resources: [cluster, cluster],
      type_url: CLUSTER_TYPE,
      nonce: 'n-1',
      control_plane: controlPlane,
    };
    const fast = encoder.sotw(message);
    expect(fast).toBeDefined();
    const type = protos.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
    expect(type.toObject(type.decode(fast as Buffer))).toEqual(
      type.toObject(type.decode(viaProtobufjs('envoy.service.discovery.v3.DiscoveryResponse', message))),
    );
    expect(Buffer.from(fast as Buffer).equals(Buffer.from(viaProtobufjs('envoy.service.discovery.v3.DiscoveryResponse', message)))).toBe(true);
  });

  test('delta: names, versions, removals', () => {
    const message = {
      system_version_info: 'v',
      resources: [{ name: 'outbound|80||a.ns.svc.cluster.local', version: 'abc', resource: cluster }],
      type_url: CLUSTER_TYPE,
      removed_resources: ['gone'],
      nonce: 'n-2',
      control_plane: controlPlane,
    };
    const fast = encoder.delta(message);
    const type = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryResponse');
    expect(type.toObject(type.decode(fast as Buffer))).toEqual(
      type.toObject(type.decode(viaProtobufjs('envoy.service.discovery.v3.DeltaDiscoveryResponse', message))),
    );
  });

  test('delta: a resource body is encoded once and shared, yet each name and version travels as given', () => {
    const type = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryResponse');
    const names = (resources: { name: string; version: string }[]) =>
      (
        type.toObject(
          type.decode(
            encoder.delta({ type_url: CLUSTER_TYPE, nonce: 'n', resources: resources.map((resource) => ({ ...resource, resource: cluster })) }) as Buffer,
          ),
        ) as { resources: { name: string; version: string }[] }
      ).resources.map((resource) => `${resource.name}@${resource.version}`);
    expect(names([{ name: 'a', version: 'v1' }])).toEqual(['a@v1']);
    expect(
      names([
        { name: 'a', version: 'v1' },
        { name: 'b', version: 'v1' },
        { name: 'a', version: 'v2' },
      ]),
    ).toEqual(['a@v1', 'b@v1', 'a@v2']);
  });

  test('a frozen list: written once, then copied whole; the bytes are those protobufjs gives, in every response carrying it', () => {
    const other = protos.encodeAny(CLUSTER_TYPE, { name: 'outbound|81||b.ns.svc.cluster.local', type: 'EDS' });
    const list = Object.freeze([cluster, other, cluster]);
    const message = (nonce: string) => ({ version_info: 'v', resources: list, type_url: CLUSTER_TYPE, nonce, control_plane: controlPlane });
    const expected = (nonce: string) =>
      Buffer.from(viaProtobufjs('envoy.service.discovery.v3.DiscoveryResponse', { ...message(nonce), resources: [cluster, other, cluster] }));
    expect(Buffer.from(encoder.sotw(message('n-1')) as Buffer).equals(expected('n-1'))).toBe(true);
    // Another response between them, unfrozen: the reused output buffer must not leak into the list's bytes.
    expect(encoder.sotw({ version_info: 'w', resources: [other], type_url: CLUSTER_TYPE, nonce: 'x' })).toBeDefined();
    expect(Buffer.from(encoder.sotw(message('n-2')) as Buffer).equals(expected('n-2'))).toBe(true);
    expect(encoder.sotw({ version_info: 'v', resources: Object.freeze([cluster, { type_url: 'x', value: 'not bytes' }]) })).toBeUndefined();
  });

  test('a frozen delta list is kept only when its Resources are frozen: a Resource changed afterwards is written as it is now', () => {
    const type = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryResponse');
    const names = (resources: readonly object[]) =>
      (
        type.toObject(type.decode(encoder.delta({ type_url: CLUSTER_TYPE, nonce: 'n', resources }) as Buffer)) as {
          resources: { name: string; version: string }[];
        }
      ).resources.map((resource) => `${resource.name}@${resource.version}`);
    const frozen = Object.freeze([
      Object.freeze({ name: 'a', version: 'v1', resource: cluster }),
      Object.freeze({ name: 'b', version: 'v1', resource: cluster }),
    ]);
    expect(names(frozen)).toEqual(['a@v1', 'b@v1']);
    expect(names(frozen)).toEqual(['a@v1', 'b@v1']);
    const mutable = { name: 'c', version: 'v1', resource: cluster };
    const halfFrozen = Object.freeze([mutable]);
    expect(names(halfFrozen)).toEqual(['c@v1']);
    mutable.version = 'v2';
    expect(names(halfFrozen)).toEqual(['c@v2']);
  });

  test('anything else is left to protobufjs', () => {
    expect(encoder.sotw({ version_info: 'v', resources: [], canary: true })).toBeUndefined();
    expect(encoder.sotw({ resources: [{ type_url: 'x', value: 'not bytes' }] })).toBeUndefined();
    expect(encoder.delta({ resources: [{ name: 'a', resource: cluster, ttl: { seconds: 1 } }] })).toBeUndefined();
  });
});
