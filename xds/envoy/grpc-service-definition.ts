import type protobuf from 'protobufjs';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';

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

type Serializer = (value: object) => Buffer;
type Deserializer = (bytes: Buffer) => object;

/** Where a service writes or reads some messages its own way (`ads-service-definition.ts`); each gets the generic codec to fall back on. */
export interface MessageCodecs {
  /** The serializer of a request or response type. */
  serializer(type: protobuf.Type, generic: Serializer): Serializer;
  /** The deserializer of a request type (responses are read the generic way). */
  requestDeserializer(type: protobuf.Type, generic: Deserializer): Deserializer;
}

const GENERIC_CODECS: MessageCodecs = { serializer: (_type, generic) => generic, requestDeserializer: (_type, generic) => generic };

/** A grpc-js service definition (servers and clients) for a protobufjs service. */
export function grpcServiceDefinition(service: protobuf.Service, codecs: MessageCodecs = GENERIC_CODECS): ServiceDefinition {
  const definition: Record<string, MethodDefinition<object, object>> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const requestType = method.resolvedRequestType;
    const responseType = method.resolvedResponseType;
    if (!requestType || !responseType) continue;
    definition[method.name] = {
      path: `/${service.fullName.slice(1)}/${method.name}`,
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
      requestSerialize: codecs.serializer(requestType, serializer(requestType)),
      requestDeserialize: codecs.requestDeserializer(requestType, deserializer(requestType)),
      responseSerialize: codecs.serializer(responseType, serializer(responseType)),
      responseDeserialize: deserializer(responseType),
      originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
    };
  }
  return definition as ServiceDefinition;
}

function serializer(type: protobuf.Type): Serializer {
  return (value) => {
    const bytes = type.encode(type.fromObject(value)).finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer(type: protobuf.Type): Deserializer {
  return (bytes) => type.toObject(type.decode(bytes), RECEIVE_OPTIONS);
}
