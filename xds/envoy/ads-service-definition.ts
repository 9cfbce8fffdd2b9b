import type protobuf from 'protobufjs';
import { withEncodedResourceNames } from './discovery-request-decoder.js';
import { newDiscoveryResponseEncoder } from './discovery-response-encoder.js';
import type { MessageCodecs } from './grpc-service-definition.js';

/**
 * What the discovery services (ADS, SDS, CSDS, delta) do differently from any gRPC service: their
 * responses of pre-encoded resources are written without protobufjs (the hot path of every push),
 * and their requests keep the subscription's names as received, so that an ACK repeating them
 * need not be decoded (`encodedResourceNames`). Every other message takes the generic path.
 */
export function discoveryMessageCodecs(): MessageCodecs {
  const fast = newDiscoveryResponseEncoder();
  return {
    serializer(type, generic) {
      if (type.fullName === '.envoy.service.discovery.v3.DiscoveryResponse') return (value) => fast.sotw(value as Record<string, unknown>) ?? generic(value);
      if (type.fullName === '.envoy.service.discovery.v3.DeltaDiscoveryResponse')
        return (value) => fast.delta(value as Record<string, unknown>) ?? generic(value);
      return generic;
    },
    requestDeserializer(type: protobuf.Type, generic) {
      if (type.fullName === '.envoy.service.discovery.v3.DiscoveryRequest') return withEncodedResourceNames(generic);
      if (type.fullName === '.envoy.service.discovery.v3.DeltaDiscoveryRequest') return withEncodedResourceNames(generic, 'resource_names_subscribe');
      return generic;
    },
  };
}
