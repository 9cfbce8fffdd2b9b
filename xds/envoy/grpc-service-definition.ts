import type protobuf from 'protobufjs';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { withEncodedResourceNames } from './discovery-request-decoder.js';
import { newDiscoveryResponseEncoder } from './discovery-response-encoder.js';

/**
 * How received messages look: Envoy's field names, enums by name, empty repeated fields as
 * arrays, unset strings as '' and unset messages as null, the set oneof member named.
 */
const RECEIVE_OPTIONS: protobuf.IConversionOptions = {
  enums: String,
  longs: Number,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
};

/** A grpc-js service definition (servers and clients) for a protobufjs service. */
export function grpcServiceDefinition(service: protobuf.Service): ServiceDefinition {
  const definition: Record<string, MethodDefinition<object, object>> = {};
  const fast = newDiscoveryResponseEncoder();
  const serializerFor = (type: protobuf.Type): ((value: object) => Buffer) => {
    const generic = serializer(type);
    // Responses of pre-encoded resources skip protobufjs: the hot path of every push.
    if (type.fullName === '.envoy.service.discovery.v3.DiscoveryResponse') return (value) => fast.sotw(value as Record<string, unknown>) ?? generic(value);
    if (type.fullName === '.envoy.service.discovery.v3.DeltaDiscoveryResponse') return (value) => fast.delta(value as Record<string, unknown>) ?? generic(value);
    return generic;
  };
  for (const method of service.methodsArray) {
    method.resolve();
    const requestType = method.resolvedRequestType;
    const responseType = method.resolvedResponseType;
    if (!requestType || !responseType) continue;
    definition[method.name] = {
      path: `/${service.fullName.slice(1)}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: serializer(requestType),
      requestDeserialize: requestDeserializer(requestType),
      responseSerialize: serializerFor(responseType),
      responseDeserialize: deserializer(responseType),
      originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
    };
  }
  return definition as ServiceDefinition;
}

function requestDeserializer(type: protobuf.Type): (bytes: Buffer) => object {
  if (type.fullName === '.envoy.service.discovery.v3.DiscoveryRequest') return withEncodedResourceNames(deserializer(type));
  if (type.fullName === '.envoy.service.discovery.v3.DeltaDiscoveryRequest') return withEncodedResourceNames(deserializer(type), 'resource_names_subscribe');
  return deserializer(type);
}

function serializer(type: protobuf.Type): (value: object) => Buffer {
  return (value) => {
    const bytes = type.encode(type.fromObject(value)).finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), RECEIVE_OPTIONS);
}
