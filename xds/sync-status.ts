import { jsonToStruct, type JsonValue } from './envoy/struct-json.js';
import { PUSH_ORDER, shortType } from './envoy/type-urls.js';
import { syncStatus, type SyncStatus } from './watch-state.js';
import type { XdsConnection } from './xds-connection.js';

/** One type of one proxy, as `/debug/syncz` shows it. */
export interface TypeSyncStatus {
  readonly type: string;
  readonly typeUrl: string;
  readonly status: SyncStatus;
  readonly sentVersion: string;
  readonly sentNonce: string;
  readonly ackedVersion: string;
  readonly ackedNonce: string;
  readonly lastError?: string;
  readonly resourceNames: number;
  readonly lastSent?: string;
}

export interface ProxySyncStatus {
  readonly proxy: string;
  readonly nodeId: string;
  readonly connectionId: string;
  readonly proxyType: string;
  readonly clusterId?: string;
  readonly namespace: string;
  readonly meshVersion?: string;
  readonly types: readonly TypeSyncStatus[];
}

/** The watched types in push order, then the others by name. */
function orderedTypes(con: XdsConnection): string[] {
  const known = PUSH_ORDER.filter((typeUrl) => con.watches.has(typeUrl));
  const others = [...con.watches.keys()].filter((typeUrl) => !PUSH_ORDER.includes(typeUrl)).sort();
  return [...known, ...others];
}

export function proxySyncStatus(con: XdsConnection): ProxySyncStatus {
  const { proxy } = con;
  return {
    proxy: proxy.id,
    nodeId: proxy.nodeId,
    connectionId: con.id,
    proxyType: proxy.type,
    ...(proxy.metadata.clusterId ? { clusterId: proxy.metadata.clusterId } : {}),
    namespace: proxy.configNamespace,
    ...(proxy.metadata.meshVersion ? { meshVersion: proxy.metadata.meshVersion } : {}),
    types: orderedTypes(con).map((typeUrl) => {
      const watch = con.watch(typeUrl);
      const sentAt = con.sentAt(typeUrl);
      return {
        type: shortType(typeUrl),
        typeUrl,
        status: syncStatus(watch),
        sentVersion: watch?.versionSent ?? '',
        sentNonce: watch?.nonceSent ?? '',
        ackedVersion: watch?.versionAcked ?? '',
        ackedNonce: watch?.nonceAcked ?? '',
        ...(watch?.lastError ? { lastError: watch.lastError } : {}),
        resourceNames: watch?.names.length ?? 0,
        ...(sentAt !== undefined ? { lastSent: new Date(sentAt).toISOString() } : {}),
      };
    }),
  };
}

/**
 * A CSDS `ClientConfig` (plain object) for one connection, as the reference's syncz: the node
 * (proxy id and a little metadata) and per watched type its config status.
 */
export function buildClientConfig(con: XdsConnection): object {
  const { proxy } = con;
  const metadata: Record<string, JsonValue> = { NAMESPACE: proxy.configNamespace };
  if (proxy.metadata.clusterId) metadata['CLUSTER_ID'] = proxy.metadata.clusterId;
  if (proxy.metadata.meshVersion) metadata['MESH_VERSION'] = proxy.metadata.meshVersion;
  return {
    node: { id: proxy.id, metadata: jsonToStruct(metadata) },
    generic_xds_configs: orderedTypes(con).map((typeUrl) => {
      const watch = con.watch(typeUrl);
      const sentAt = con.sentAt(typeUrl);
      return {
        type_url: typeUrl,
        version_info: watch?.versionSent ?? '',
        config_status: syncStatus(watch),
        ...(watch?.lastError ? { error_state: { details: watch.lastError } } : {}),
        ...(sentAt !== undefined ? { last_updated: timestamp(sentAt) } : {}),
      };
    }),
  };
}

function timestamp(ms: number): { seconds: number; nanos: number } {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}
