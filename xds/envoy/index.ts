// The Envoy and gRPC plumbing shared by the daemon, the CA, the agent and the data plane: the v3
// protos and their strict verification, type URLs, Struct conversion, gRPC service definitions
// for protobufjs services, the discovery response encoder, and the discovery clients (ADS and
// SDS; state of the world and delta). It pulls in no part of the xDS server.
export * from './type-urls.js';
export {
  ENVOY_PROTO_FILES,
  SDS_PROTO_FILES,
  AUTHORIZATION_PROTO_FILES,
  AUTHORIZATION_SERVICE,
  ADS_SERVICE,
  CSDS_SERVICE,
  SDS_SERVICE,
  loadEnvoyProtos,
  protoIncludeDirs,
  type EncodedAny,
  type EnvoyProtos,
  type LoadEnvoyProtosOptions,
} from './envoy-protos.js';
export { structToJson, jsonToStruct, valueToJson, jsonToValue, type JsonValue, type StructMessage, type ValueMessage } from './struct-json.js';
export { grpcServiceDefinition } from './grpc-service-definition.js';
export { newDiscoveryResponseEncoder } from './discovery-response-encoder.js';
export { encodedResourceNames } from './discovery-request-decoder.js';
export { type Backoff, type DiscoveryConnectionOptions, type StreamEnd } from './discovery-stream.js';
export { withPartKey, type EncodedParts } from './encoded-parts.js';
export { firstStringField } from './wire-fields.js';
export { newRawDiscoveryCodec, type RawDiscoveryCodec } from './raw-discovery-codec.js';
export { newDiscoveryClient, type DiscoveryClient, type DiscoveryClientOptions, type DiscoveryRequest, type DiscoveryResponse } from './discovery-client.js';
export {
  newDeltaDiscoveryClient,
  type DecodedDeltaResource,
  type DeltaDiscoveryClient,
  type DeltaDiscoveryClientOptions,
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
  type DeltaResource,
} from './delta-discovery-client.js';
export { routeNamesOf } from './route-names.js';
