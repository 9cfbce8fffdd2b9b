import { buildConfigDump } from './config-dump.js';
import { DEBUG_NOT_AVAILABLE, mayReadConfigDump, type DebugReader } from './debug-access.js';
import type { DebugSource } from './debug-source.js';
import { proxySyncStatus } from '../sync-status.js';
import { shortType } from '../envoy/type-urls.js';

/** One debug answer: an HTTP-like status and a JSON body. */
export interface DebugView {
  readonly status: 200 | 400 | 403 | 404;
  readonly body: unknown;
}

/** The debug paths served on the daemon's HTTP ports and, through the agents, over xDS (`mesh.io/debug`). */
export const DEBUG_PATHS = ['syncz', 'adsz', 'push_status', 'config_dump', 'config_distribution'] as const;
export type DebugPath = (typeof DEBUG_PATHS)[number];

export function isDebugPath(path: string): path is DebugPath {
  return (DEBUG_PATHS as readonly string[]).includes(path);
}

/**
 * The xDS debug views: one implementation for `/debug/<path>` and the `mesh.io/debug` type. No key
 * material in any. A reader outside the system namespace sees config dumps of its namespaces only,
 * and an absent proxy answers as one of another namespace does.
 */
export function debugView(source: DebugSource, path: DebugPath, query: URLSearchParams, reader: DebugReader): DebugView {
  if (!reader.all && path !== 'config_dump') return { status: 403, body: { error: DEBUG_NOT_AVAILABLE } };
  switch (path) {
    case 'syncz':
      return { status: 200, body: source.proxyConnections().map(proxySyncStatus) };
    case 'adsz': {
      const connections = source.proxyConnections();
      return {
        status: 200,
        body: {
          totalClients: connections.length,
          clients: connections.map((con) => ({
            connectionId: con.id,
            proxy: con.proxy.id,
            nodeId: con.proxy.nodeId,
            proxyType: con.proxy.type,
            peerAddress: con.peerAddress,
            connectedAt: new Date(con.connectedAt).toISOString(),
            stream: con.kind,
            ...(con.proxy.metadata.meshVersion ? { meshVersion: con.proxy.metadata.meshVersion } : {}),
            ...(con.proxy.metadata.clusterId ? { clusterId: con.proxy.metadata.clusterId } : {}),
            namespace: con.proxy.configNamespace,
            lastPushVersion: con.lastPushVersion,
            watches: Object.fromEntries(
              [...con.watches.values()].map((watch) => [shortType(watch.typeUrl), { typeUrl: watch.typeUrl, wildcard: watch.wildcard, names: watch.names }]),
            ),
          })),
        },
      };
    }
    case 'push_status': {
      const last = source.lastPush();
      if (!last) return { status: 200, body: {} };
      return {
        status: 200,
        body: {
          ...last,
          triggeredAt: new Date(last.triggeredAt).toISOString(),
          contextBuiltAt: new Date(last.contextBuiltAt).toISOString(),
          pendingProxies: source.pendingPushes(),
        },
      };
    }
    case 'config_dump': {
      const proxyId = query.get('proxyID');
      if (!proxyId) return { status: 400, body: { error: 'you must provide a proxyID in the query string' } };
      const con = source.findConnection(proxyId);
      if (!mayReadConfigDump(reader, con?.proxy.configNamespace)) return { status: 403, body: { error: DEBUG_NOT_AVAILABLE } };
      if (!con) return { status: 404, body: { error: 'proxy not connected to this daemon', proxyID: proxyId } };
      return { status: 200, body: buildConfigDump(con, source.protos) };
    }
    case 'config_distribution': {
      const resource = query.get('resource');
      if (!resource)
        return { status: 400, body: { error: 'you must provide a resource query parameter: <Kind>/<namespace>/<name>, e.g. VirtualService/default/bookinfo' } };
      // `<group>/<version>/<Kind>/<ns>/<name>` is accepted too, as the reference's clients send it.
      const key = resource.split('/').slice(-3).join('/');
      const distribution = source.configDistribution(key);
      if (!distribution) return { status: 400, body: { error: 'config distribution tracking is disabled (PILOT_ENABLE_CONFIG_DISTRIBUTION_TRACKING=false)' } };
      return { status: 200, body: distribution };
    }
  }
}
