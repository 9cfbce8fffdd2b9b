import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import type { PushStatus } from '../push/push-snapshot.js';
import type { XdsConnection } from '../xds-connection.js';

/** What the debug views read of the xDS server (the discovery server implements it). */
export interface DebugSource {
  readonly protos: EnvoyProtos;
  /** The streams of proxies: those that asked for config, not only for debug views. */
  proxyConnections(): XdsConnection[];
  /** A connection by its id, its proxy's `<pod>.<namespace>` or its full node id (the newest wins). */
  findConnection(proxyId: string): XdsConnection | undefined;
  lastPush(): PushStatus | undefined;
  /** Connections waiting in the push queue. */
  pendingPushes(): number;
  /** Per proxy, the generation of `resource` (`<Kind>/<ns>/<name>`) in what it acknowledged; undefined when tracking is off. */
  configDistribution(resource: string): DistributionStatus[] | undefined;
}

/** The reference's `SyncedVersions`: the config's generation in each acknowledged type (`''`: absent or unknown). */
export interface DistributionStatus {
  readonly proxy: string;
  readonly cluster_acked: string;
  readonly listener_acked: string;
  readonly route_acked: string;
}
