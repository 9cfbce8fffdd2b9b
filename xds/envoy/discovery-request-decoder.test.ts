import { describe, expect, test } from '@jest/globals';
import { encodedResourceNames } from './discovery-request-decoder.js';
import { ADS_SERVICE, loadEnvoyProtos } from './envoy-protos.js';
import { ENDPOINT_TYPE } from './type-urls.js';
import { lengthDelimitedField } from './testing/wire-bytes.js';

const protos = loadEnvoyProtos();
const requestType = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
const method = protos.serviceDefinition(ADS_SERVICE)['StreamAggregatedResources'];
if (!method) throw new Error('no StreamAggregatedResources');
const decode = (bytes: Buffer): Record<string, unknown> => method.requestDeserialize(bytes) as Record<string, unknown>;
const encode = (message: object): Buffer => Buffer.from(requestType.encode(requestType.fromObject(message)).finish());
const plain = (bytes: Buffer): unknown =>
  requestType.toObject(requestType.decode(bytes), { enums: String, longs: Number, defaults: true, arrays: true, objects: true, oneofs: true });

const names = Array.from({ length: 200 }, (_, i) => `outbound|${8000 + (i % 7)}||svc-${i}.ns-${i % 20}.svc.cluster.local`);
const ack = {
  version_info: 'v1',
  node: { id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local' },
  resource_names: names,
  type_url: ENDPOINT_TYPE,
  response_nonce: 'v1/n',
};

describe('DiscoveryRequest resource names kept encoded', () => {
  test('a large subscription decodes as the plain decoder does, with the names bytes beside it', () => {
    const bytes = encode(ack);
    const decoded = decode(bytes);
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(plain(bytes));
    expect(decoded['resource_names']).toEqual(names);
    const encoded = encodedResourceNames(decoded);
    expect(encoded).toBeDefined();
    expect(encoded?.equals(encode({ resource_names: names }))).toBe(true);
    // The bytes do not show in logs or dumps of the request.
    expect(Object.keys(decoded)).not.toContain('namesEncoded');
  });

  test('the same subscription gives the same bytes; one changed name does not', () => {
    const first = encodedResourceNames(decode(encode(ack)));
    const again = encodedResourceNames(decode(encode({ ...ack, response_nonce: 'v2/m', version_info: 'v2' })));
    const changed = encodedResourceNames(decode(encode({ ...ack, resource_names: [...names.slice(0, -1), 'outbound|80||other.ns.svc.cluster.local'] })));
    expect(first?.equals(again as Buffer)).toBe(true);
    expect(first?.equals(changed as Buffer)).toBe(false);
  });

  test('names are exact past the bound of the pool that shares them between streams, long names included', () => {
    const many = Array.from({ length: 70_000 }, (_, i) => `outbound|80||s-${i}.ns.svc.cluster.local`);
    const long = `outbound|80||${'x'.repeat(300)}.ns.svc.cluster.local`;
    for (const subscription of [many, [...names, long], many.slice(60_000).concat(names)]) {
      expect(decode(encode({ ...ack, resource_names: subscription }))['resource_names']).toEqual(subscription);
    }
  });

  test('an ACK repeating a subscription read before gets its names and bytes without a walk, exactly as the first time', () => {
    const subscription = names.map((name) => `${name}-acked`);
    const first = decode(encode({ ...ack, resource_names: subscription }));
    const firstNames = first['resource_names'];
    const again = decode(encode({ ...ack, resource_names: subscription, response_nonce: 'v9/x', version_info: 'v9' }));
    expect(again['resource_names']).toBe(firstNames);
    expect(again).toMatchObject({ version_info: 'v9', response_nonce: 'v9/x', type_url: ENDPOINT_TYPE });
    expect(encodedResourceNames(again)?.equals(encodedResourceNames(first) as Buffer)).toBe(true);
  });

  test('the names of a subscription read before, followed by more names, are all the names', () => {
    const subscription = names.map((name) => `${name}-longer`);
    // Read once: the decoder remembers a subscription whose names were read.
    expect(decode(encode({ ...ack, resource_names: subscription }))['resource_names']).toEqual(subscription);
    const longer = [...subscription, 'outbound|80||one-more.ns.svc.cluster.local'];
    expect(decode(encode({ ...ack, resource_names: longer }))['resource_names']).toEqual(longer);
    // And after another field: the plain decoder's reading (every field-3 entry, in order).
    const nameFields = subscription.map((name) => lengthDelimitedField(3, Buffer.from(name)));
    const split = Buffer.concat([
      ...nameFields,
      lengthDelimitedField(4, Buffer.from(ENDPOINT_TYPE)),
      lengthDelimitedField(3, Buffer.from('outbound|80||after.ns.svc.cluster.local')),
    ]);
    const decoded = decode(split);
    expect(decoded['resource_names']).toEqual([...subscription, 'outbound|80||after.ns.svc.cluster.local']);
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(plain(split));
    expect(encodedResourceNames(decoded)).toBeUndefined();
  });

  test('small requests, and names split by another field, go through the plain decoder', () => {
    expect(encodedResourceNames(decode(encode({ ...ack, resource_names: ['a', 'b'] })))).toBeUndefined();
    const nameFields = names.map((name) => lengthDelimitedField(3, Buffer.from(name)));
    const split = Buffer.concat([...nameFields.slice(0, 100), lengthDelimitedField(4, Buffer.from(ENDPOINT_TYPE)), ...nameFields.slice(100)]);
    const decoded = decode(split);
    expect(encodedResourceNames(decoded)).toBeUndefined();
    expect(decoded['resource_names']).toEqual(names);
  });

  test('long and non-ASCII names (lengths of two bytes) decode exactly', () => {
    const long = names.map((name, i) => `${name}-${'ü'.repeat(70 + (i % 3))}`);
    const decoded = decode(encode({ ...ack, resource_names: long }));
    expect(decoded['resource_names']).toEqual(long);
    expect(encodedResourceNames(decoded)).toBeDefined();
  });

  test('an invalid UTF-8 name is refused when the request is decoded, as by the plain decoder', () => {
    const bad = Buffer.concat([...names.map((name) => lengthDelimitedField(3, Buffer.from(name))), lengthDelimitedField(3, Buffer.from([0x61, 0xc3, 0x28]))]);
    expect(() => plain(bad)).toThrow();
    expect(() => decode(bad)).toThrow(/utf8|utf-8/i);
    // Overlong and truncated sequences too.
    expect(() => decode(Buffer.concat([bad.subarray(0, 600), lengthDelimitedField(3, Buffer.from([0xe0, 0x80, 0xaf]))]))).toThrow();
  });

  test('a truncated or malformed request fails as the plain decoder fails', () => {
    const bytes = encode(ack);
    const truncated = bytes.subarray(0, bytes.length - 5);
    expect(() => plain(truncated)).toThrow();
    expect(() => decode(truncated)).toThrow();
    // Field 3 as a varint: whatever the plain decoder makes of it, the same.
    const wrongWireType = Buffer.concat([bytes, Buffer.from([(3 << 3) | 0, 1])]);
    let expected: unknown;
    try {
      expected = plain(wrongWireType);
    } catch (error) {
      expected = error;
    }
    if (expected instanceof Error) expect(() => decode(wrongWireType)).toThrow(expected.message);
    else expect(JSON.parse(JSON.stringify(decode(wrongWireType)))).toEqual(expected);
  });
});

describe('DeltaDiscoveryRequest subscriptions kept encoded', () => {
  const deltaType = protos.lookupType('envoy.service.discovery.v3.DeltaDiscoveryRequest');
  const deltaMethod = protos.serviceDefinition(ADS_SERVICE)['DeltaAggregatedResources'];
  if (!deltaMethod) throw new Error('no DeltaAggregatedResources');
  const decodeDelta = (bytes: Buffer): Record<string, unknown> => deltaMethod.requestDeserialize(bytes) as Record<string, unknown>;
  const encodeDelta = (message: object): Buffer => Buffer.from(deltaType.encode(deltaType.fromObject(message)).finish());
  const plainDelta = (bytes: Buffer): unknown =>
    deltaType.toObject(deltaType.decode(bytes), { enums: String, longs: Number, defaults: true, arrays: true, objects: true, oneofs: true });
  const subscribe = {
    node: { id: 'sidecar~10.0.0.1~a.ns~ns.svc.cluster.local' },
    type_url: ENDPOINT_TYPE,
    resource_names_subscribe: names,
    resource_names_unsubscribe: ['outbound|80||gone.ns.svc.cluster.local'],
    initial_resource_versions: { 'outbound|80||held.ns.svc.cluster.local': 'v0' },
    response_nonce: '',
  };

  test('a large subscribe decodes as the plain decoder does, every other field included', () => {
    const bytes = encodeDelta(subscribe);
    const decoded = decodeDelta(bytes);
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(plainDelta(bytes));
    expect(decoded['resource_names_subscribe']).toEqual(names);
    expect(encodedResourceNames(decoded)?.equals(encodeDelta({ resource_names_subscribe: names }))).toBe(true);
  });

  test('streams sending the same names share one frozen list; other names get their own', () => {
    const first = decodeDelta(encodeDelta(subscribe))['resource_names_subscribe'];
    const again = decodeDelta(encodeDelta({ ...subscribe, node: { id: 'sidecar~10.0.0.2~b.ns~ns.svc.cluster.local' } }))['resource_names_subscribe'];
    const other = decodeDelta(encodeDelta({ ...subscribe, resource_names_subscribe: [...names].reverse() }))['resource_names_subscribe'];
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(other).not.toBe(first);
    expect(other).toEqual([...names].reverse());
  });

  test('an invalid UTF-8 name to subscribe is refused when the request is decoded', () => {
    const bad = Buffer.concat([
      lengthDelimitedField(2, Buffer.from(ENDPOINT_TYPE)),
      ...names.map((name) => lengthDelimitedField(3, Buffer.from(name))),
      lengthDelimitedField(3, Buffer.from([0x61, 0xc3, 0x28])),
    ]);
    expect(() => plainDelta(bad)).toThrow();
    expect(() => decodeDelta(bad)).toThrow(/utf8|utf-8/i);
  });
});
