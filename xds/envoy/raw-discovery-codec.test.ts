import { describe, expect, test } from '@jest/globals';
import { loadEnvoyProtos } from './envoy-protos.js';
import { lazyResourcesDecoder, namesEncodedOnceEncoder } from './raw-discovery-codec.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE } from './type-urls.js';

const protos = loadEnvoyProtos();
const sotwResponse = protos.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
const deltaResponse = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryResponse');
const sotwRequest = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
const deltaRequest = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
const encode = (type: typeof sotwRequest, message: object): Buffer => Buffer.from(type.encode(type.fromObject(message)).finish());

const cluster = (name: string) => protos.encodeAny(CLUSTER_TYPE, { name, type: 'EDS', eds_cluster_config: { eds_config: { ads: {} } } });
const names = Array.from({ length: 100 }, (_, i) => `outbound|80||svc-${i}.ns-${i % 20}.svc.cluster.local`);

describe('lazyResourcesDecoder', () => {
  test('the envelope at once and the resources when read, as the plain decoder gives them', () => {
    const message = {
      version_info: 'v1',
      resources: names.slice(0, 5).map(cluster),
      type_url: CLUSTER_TYPE,
      nonce: 'n1',
      control_plane: { identifier: 'meshd' },
    };
    const bytes = encode(sotwResponse, message);
    const decoded = lazyResourcesDecoder(sotwResponse)(bytes) as Record<string, unknown>;
    const plain = sotwResponse.decode(bytes) as unknown as Record<string, unknown>;
    expect(decoded).toMatchObject({ version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1', bytes: bytes.length, control_plane: { identifier: 'meshd' } });
    expect(JSON.parse(JSON.stringify(decoded['resources']))).toEqual(JSON.parse(JSON.stringify(plain['resources'])));
  });

  test('a delta response: names, versions and removals', () => {
    const message = {
      system_version_info: 'v2',
      resources: names.slice(0, 3).map((name) => ({ name, version: 'x', resource: cluster(name) })),
      type_url: CLUSTER_TYPE,
      removed_resources: ['gone'],
      nonce: 'n2',
    };
    const decoded = lazyResourcesDecoder(deltaResponse)(encode(deltaResponse, message)) as {
      resources: { name: string; version: string }[];
      removed_resources: string[];
      nonce: string;
    };
    expect(decoded.nonce).toBe('n2');
    expect(decoded.removed_resources).toEqual(['gone']);
    expect(decoded.resources.map((resource) => [resource.name, resource.version])).toEqual(names.slice(0, 3).map((name) => [name, 'x']));
  });

  test('resources are not decoded until read: a broken one fails only then', () => {
    const good = encode(sotwResponse, { version_info: 'v1', type_url: CLUSTER_TYPE, nonce: 'n1' });
    // Field 2 holding an Any whose body claims more bytes than it has.
    const broken = Buffer.concat([good, Buffer.from([0x12, 0x03, 0x0a, 0x09, 0x61])]);
    expect(() => sotwResponse.decode(broken)).toThrow();
    const decoded = lazyResourcesDecoder(sotwResponse)(broken) as Record<string, unknown>;
    expect(decoded['nonce']).toBe('n1');
    expect(() => decoded['resources']).toThrow();
  });

  test('resources split by another field, and no resources at all, are decoded whole', () => {
    const part = (version: string, resourceNames: string[]) => encode(sotwResponse, { version_info: version, resources: resourceNames.map(cluster) });
    const split = Buffer.concat([part('', ['a']), encode(sotwResponse, { nonce: 'n3' }), part('', ['b'])]);
    const decoded = lazyResourcesDecoder(sotwResponse)(split) as { resources: { value: Uint8Array }[]; nonce: string };
    expect(decoded.nonce).toBe('n3');
    expect(decoded.resources).toHaveLength(2);
    const empty = lazyResourcesDecoder(sotwResponse)(encode(sotwResponse, { nonce: 'n4' })) as { resources: unknown[] };
    expect(empty.resources).toEqual([]);
  });
});

describe('namesEncodedOnceEncoder', () => {
  const node = { id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local', cluster: 'a.ns' };

  test('a frozen list of names gives the bytes of the whole message, for every other field around it', () => {
    const encoder = namesEncodedOnceEncoder(sotwRequest, 'resource_names');
    const frozen = Object.freeze([...names]);
    for (const request of [
      { version_info: 'v1', node, resource_names: frozen, type_url: ENDPOINT_TYPE, response_nonce: 'n1' },
      { resource_names: frozen, type_url: ENDPOINT_TYPE, response_nonce: 'n2', version_info: 'v2' },
      { version_info: 'v2', resource_names: frozen, type_url: ENDPOINT_TYPE, response_nonce: 'n3', error_detail: { code: 3, message: 'no' } },
      { resource_names: frozen },
    ]) {
      expect(encoder(request).equals(encode(sotwRequest, request))).toBe(true);
    }
  });

  test('a delta subscription: subscribe before unsubscribe, initial versions and the nonce', () => {
    const encoder = namesEncodedOnceEncoder(deltaRequest, 'resource_names_subscribe');
    const request = {
      node,
      type_url: ENDPOINT_TYPE,
      resource_names_subscribe: Object.freeze([...names]),
      resource_names_unsubscribe: ['gone'],
      initial_resource_versions: { held: 'v0' },
      response_nonce: 'n1',
    };
    expect(encoder(request).equals(encode(deltaRequest, request))).toBe(true);
  });

  test('a list changed in place is encoded afresh: only frozen lists are reused', () => {
    const encoder = namesEncodedOnceEncoder(sotwRequest, 'resource_names');
    const mutable = [...names];
    const first = encoder({ resource_names: mutable, response_nonce: 'n1' });
    mutable[0] = 'outbound|80||changed.ns.svc.cluster.local';
    const second = encoder({ resource_names: mutable, response_nonce: 'n1' });
    expect(second.equals(first)).toBe(false);
    expect(second.equals(encode(sotwRequest, { resource_names: mutable, response_nonce: 'n1' }))).toBe(true);
  });
});
