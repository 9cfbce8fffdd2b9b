import type protobuf from 'protobufjs';
import type { EnvoyProtos } from './envoy-protos.js';
import { contiguousFieldSpan, withoutSpan } from './wire-fields.js';
import { MeshError } from '../../runtime/index.js';

export type RawStreamFlavour = 'sotw' | 'delta';

/** The request encoder and response decoder of one stream flavour. */
export interface RawMethodCodec {
  requestSerialize(value: object): Buffer;
  responseDeserialize(bytes: Buffer): object;
}

/**
 * How a load generator's streams read and write: responses as far as an ACK needs, a
 * subscription's names encoded once. One codec shared by all the streams of a load generator
 * encodes the names they share once in all.
 */
export interface RawDiscoveryCodec {
  readonly protos: EnvoyProtos;
  methods(flavour: RawStreamFlavour): RawMethodCodec;
}

const TYPES: Readonly<Record<RawStreamFlavour, { request: string; namesProperty: string; response: string }>> = {
  sotw: { request: 'envoy.service.discovery.v3.DiscoveryRequest', namesProperty: 'resource_names', response: 'envoy.service.discovery.v3.DiscoveryResponse' },
  delta: {
    request: 'envoy.service.discovery.v3.DeltaDiscoveryRequest',
    namesProperty: 'resource_names_subscribe',
    response: 'envoy.service.discovery.v3.DeltaDiscoveryResponse',
  },
};

export function newRawDiscoveryCodec(protos: EnvoyProtos): RawDiscoveryCodec {
  const built = new Map<RawStreamFlavour, RawMethodCodec>();
  return {
    protos,
    methods(flavour) {
      let codec = built.get(flavour);
      if (!codec) {
        const types = TYPES[flavour];
        codec = {
          requestSerialize: namesEncodedOnceEncoder(protos.lookupType(types.request), types.namesProperty),
          responseDeserialize: lazyResourcesDecoder(protos.lookupType(types.response)),
        };
        built.set(flavour, codec);
      }
      return codec;
    },
  };
}

/** `resources` is field 2 of both DiscoveryResponse and DeltaDiscoveryResponse. */
const RESOURCES_FIELD = 2;

/**
 * The response decoder of load generators: the envelope (version, nonce, type, removals) decoded
 * at once, the resources only when `resources` is read (an ACK needs none of them), and the
 * encoded size in `bytes`. A response whose resources are not one run on the wire is decoded
 * whole. A malformed resource fails when `resources` is read, not before.
 */
export function lazyResourcesDecoder(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => {
    const span = contiguousFieldSpan(bytes, RESOURCES_FIELD);
    if (!span) return Object.assign(type.decode(bytes), { bytes: bytes.length });
    const envelope = Object.assign(type.decode(withoutSpan(bytes, span)), { bytes: bytes.length });
    let resources: unknown;
    Object.defineProperty(envelope, 'resources', {
      enumerable: true,
      configurable: true,
      get: () => (resources ??= (type.decode(bytes.subarray(span.start, span.end)) as unknown as { resources: unknown }).resources),
    });
    return envelope;
  };
}

/** Names lists shorter than this are encoded with the rest of the request. */
const MIN_CACHED_NAMES = 64;
/** Distinct lists of names kept encoded; the oldest is forgotten first. */
const MAX_CACHED_LISTS = 16;

/**
 * The request encoder of load generators: a large list of names in `property` (field 3 of
 * DiscoveryRequest and DeltaDiscoveryRequest) is encoded once and its bytes reused by every
 * request that carries an equal list (a state-of-the-world ACK repeats the whole subscription),
 * placed between the lower- and higher-numbered fields: the bytes protobufjs writes for the
 * whole message. A list is found by its length and three of its names, and then compared name
 * by name with the copy kept beside its bytes.
 */
export function namesEncodedOnceEncoder(type: protobuf.Type, property: string): (value: object) => Buffer {
  const namesField = type.fields[property];
  if (!namesField) throw new MeshError('proto-layout-changed', `${type.fullName} has no field ${property}`);
  const encode = (value: object): Uint8Array => type.encode(type.fromObject(value)).finish();
  const encodedLists = new Map<string, { names: readonly string[]; bytes: Uint8Array }>();
  const namesBytesOf = (names: readonly string[]): Uint8Array => {
    const key = `${names.length}\n${names[0]}\n${names[names.length >> 1]}\n${names[names.length - 1]}`;
    const known = encodedLists.get(key);
    if (known && sameNames(known.names, names)) return known.bytes;
    const bytes = encode({ [property]: names });
    encodedLists.delete(key);
    encodedLists.set(key, { names: [...names], bytes });
    if (encodedLists.size > MAX_CACHED_LISTS) encodedLists.delete(encodedLists.keys().next().value as string);
    return bytes;
  };
  return (value) => {
    const names = (value as Record<string, unknown>)[property];
    if (!Array.isArray(names) || names.length < MIN_CACHED_NAMES) return Buffer.from(encode(value));
    const namesBytes = namesBytesOf(names as string[]);
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (const [key, fieldValue] of Object.entries(value)) {
      if (key === property) continue;
      const field = type.fields[key];
      if (field && field.id < namesField.id) before[key] = fieldValue;
      else after[key] = fieldValue;
    }
    return Buffer.concat([encode(before), namesBytes, encode(after)]);
  };
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
