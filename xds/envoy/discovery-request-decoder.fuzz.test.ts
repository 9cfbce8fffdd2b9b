import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import { ADS_SERVICE, loadEnvoyProtos } from './envoy-protos.js';
import { ENDPOINT_TYPE } from './type-urls.js';
import { lengthDelimitedField } from './testing/wire-bytes.js';

// The request decoder that keeps large subscriptions encoded (and finds a repeated one by its
// bytes) against protobufjs's plain decoder, on requests an attacker shapes: names split by other
// fields, a run that repeats a recent subscription and then goes on, invalid UTF-8, truncations.
// Whatever the plain decoder makes of the bytes, ours makes the same, or both fail.

const protos = loadEnvoyProtos();
const RECEIVE = { enums: String, longs: Number, defaults: true, arrays: true, objects: true, oneofs: true } as const;

const baseNames = Array.from({ length: 120 }, (_, i) => `outbound|${8000 + (i % 7)}||svc-${i}.ns-${i % 20}.svc.cluster.local`);

/** A piece of a request on the wire: names from the shared subscription, another name, another field, or raw bytes. */
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Buffer>(Buffer.concat(baseNames.map((name) => lengthDelimitedField(3, Buffer.from(name))))) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }).map((name) => lengthDelimitedField(3, Buffer.from(name))) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 12 }).map((bytes) => lengthDelimitedField(3, Buffer.from(bytes))) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(1, 4, 5).chain((number) => fc.string({ maxLength: 30 }).map((text) => lengthDelimitedField(number, Buffer.from(text)))),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 8 }).map((bytes) => Buffer.from(bytes)) },
);

function outcome(run: () => Record<string, unknown>): unknown {
  try {
    return { value: JSON.parse(JSON.stringify(run())) as unknown };
  } catch {
    return 'fails';
  }
}

describe.each([
  // The type URL is field 4 of a DiscoveryRequest, field 2 of a DeltaDiscoveryRequest.
  ['DiscoveryRequest', 'StreamAggregatedResources', 'envoy.service.discovery.v3.DiscoveryRequest', 4],
  ['DeltaDiscoveryRequest', 'DeltaAggregatedResources', 'envoy.service.discovery.v3.DeltaDiscoveryRequest', 2],
] as const)('%s decoded with its names kept encoded', (_name, methodName, typeName, typeUrlField) => {
  test('decodes every request as the plain decoder does, after the shared subscription was read', () => {
    const method = protos.serviceDefinition(ADS_SERVICE)[methodName];
    if (!method) throw new Error(`no ${methodName}`);
    const type = protos.lookupType(typeName);
    const property = typeName.endsWith('DeltaDiscoveryRequest') ? 'resource_names_subscribe' : 'resource_names';
    const decode = (bytes: Buffer): Record<string, unknown> => method.requestDeserialize(bytes) as Record<string, unknown>;
    const plain = (bytes: Buffer): Record<string, unknown> => type.toObject(type.decode(bytes), RECEIVE);
    // The decoder remembers the subscription once its names were read, as a first request's are.
    const first = Buffer.concat([
      lengthDelimitedField(typeUrlField, Buffer.from(ENDPOINT_TYPE)),
      ...baseNames.map((name) => lengthDelimitedField(3, Buffer.from(name))),
    ]);
    expect(decode(first)[property]).toEqual(baseNames);
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.nat(), (pieces, cut) => {
        const whole = Buffer.concat(pieces);
        for (const bytes of [whole, whole.subarray(0, cut % (whole.length + 1))]) {
          expect(outcome(() => decode(bytes))).toEqual(outcome(() => plain(bytes)));
        }
      }),
      fuzzParameters({ numRuns: 300 }),
    );
  });
});
