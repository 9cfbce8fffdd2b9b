import type { DestinationRule, Subset } from '../../crds/index.js';
import type { Service, ServicePort } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import type { PushContext } from './push-context.js';

/** What the transport-socket hook is told about one cluster. */
export interface ClusterTransportSocketInput {
  readonly proxy: Proxy;
  readonly push: PushContext;
  readonly clusterName: string;
  readonly direction: 'outbound' | 'inbound';
  readonly service: Service;
  readonly servicePort: ServicePort;
  /** Outbound only: the subset of a subset cluster. */
  readonly subset?: Subset;
  /** Outbound only: the DestinationRule that applies. */
  readonly destinationRule?: DestinationRule;
  /** Inbound only: the container port. */
  readonly targetPort?: number;
}

/** Transport-socket fields merged into a cluster (the security filters build them). */
export interface ClusterTransportSocket {
  readonly transport_socket?: object;
  readonly transport_socket_matches?: readonly object[];
}

/** Adds TLS (or any transport socket) to a service cluster; undefined leaves it plaintext. */
export type ClusterTransportSocketHook = (input: ClusterTransportSocketInput) => ClusterTransportSocket | undefined;
