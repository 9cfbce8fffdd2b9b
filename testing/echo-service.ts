import type { ServiceDefinition } from '@grpc/grpc-js';

/** A gRPC service without a proto for tests: one unary method whose messages are raw bytes. */
export const ECHO_SERVICE: ServiceDefinition = {
  Echo: {
    path: '/mesh.test.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};
