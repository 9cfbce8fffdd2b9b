import type { FastifyInstance } from 'fastify';
import { buildConfigDump } from './config-dump.js';
import type { DiscoveryServer } from './discovery-server.js';
import { proxySyncStatus } from './sync-status.js';
import { shortType } from './type-urls.js';

/**
 * The xDS debug endpoints, for the daemon's HTTP port (8080, unless ENABLE_DEBUG_ON_HTTP=false)
 * and its monitoring port (15014): `/debug/syncz`, `/debug/adsz`, `/debug/push_status`,
 * `/debug/config_dump?proxyID=<pod>.<namespace>`. No key material in any of them.
 */
export function registerXdsDebugRoutes<C>(app: FastifyInstance, discovery: DiscoveryServer<C>): void {
  app.get('/debug/syncz', async () => discovery.connections().map(proxySyncStatus));

  app.get('/debug/adsz', async () => {
    const connections = discovery.connections();
    return {
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
    };
  });

  app.get('/debug/push_status', async () => {
    const last = discovery.lastPush();
    if (!last) return {};
    return {
      ...last,
      triggeredAt: new Date(last.triggeredAt).toISOString(),
      contextBuiltAt: new Date(last.contextBuiltAt).toISOString(),
      pendingProxies: discovery.pendingPushes(),
    };
  });

  app.get<{ Querystring: { proxyID?: string } }>('/debug/config_dump', async (request, reply) => {
    const proxyId = request.query.proxyID;
    if (!proxyId) return reply.code(400).send({ error: 'you must provide a proxyID in the query string' });
    const con = discovery.findConnection(proxyId);
    if (!con) return reply.code(404).send({ error: 'proxy not connected to this daemon', proxyID: proxyId });
    return buildConfigDump(con, discovery.protos);
  });
}
