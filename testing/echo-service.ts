import type { ServiceDefinition } from '@grpc/grpc-js';

function rawUnary(path: string): ServiceDefinition[string] {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (bytes: Buffer) => bytes,
  };
}

/**
 * A gRPC service without a proto for tests: unary methods whose messages are raw bytes. `Admin`
 * exists so authorization can refuse one method of a service and not the other.
 */
export const ECHO_SERVICE: ServiceDefinition = {
  Echo: rawUnary('/mesh.test.Echo/Echo'),
  Admin: rawUnary('/mesh.test.Echo/Admin'),
};
