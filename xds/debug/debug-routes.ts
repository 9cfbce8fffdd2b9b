import type { FastifyInstance } from 'fastify';
import type { DebugAccess } from './debug-access.js';
import { debugView, DEBUG_PATHS } from './debug-views.js';
import type { DiscoveryServer } from '../discovery-server.js';

export interface XdsDebugRouteOptions {
  readonly access: DebugAccess;
  /** UNSAFE_ENABLE_ADMIN_ENDPOINTS: `/debug/force_disconnect?proxyID=` ends a proxy's stream (it reconnects). */
  readonly unsafeAdminEndpoints: boolean;
}

/**
 * The xDS debug endpoints, for the daemon's HTTP port (8080, unless ENABLE_DEBUG_ON_HTTP=false)
 * and its monitoring port (15014): `/debug/syncz`, `/debug/adsz`, `/debug/push_status`,
 * `/debug/config_dump?proxyID=<pod>.<namespace>`, behind the debug access check, which this
 * installs for every `/debug/` route of the app. No key material in any of them.
 */
export function registerXdsDebugRoutes<C>(app: FastifyInstance, discovery: DiscoveryServer<C>, options: XdsDebugRouteOptions): void {
  options.access.install(app);
  for (const path of DEBUG_PATHS) {
    app.get(`/debug/${path}`, async (request, reply) => {
      const view = debugView(discovery, path, new URL(request.url, 'http://debug').searchParams, options.access.readerOf(request));
      return reply.code(view.status).send(view.body);
    });
  }
  if (options.unsafeAdminEndpoints) {
    app.get('/debug/force_disconnect', async (request, reply) => {
      if (!options.access.readerOf(request).all) return reply.code(403).send({ error: 'force_disconnect is only available to the system namespace' });
      const proxyId = new URL(request.url, 'http://debug').searchParams.get('proxyID') ?? '';
      const con = discovery.findConnection(proxyId);
      if (!con) return reply.code(404).send({ error: 'proxy not connected to this daemon', proxyID: proxyId });
      discovery.forceDisconnect(con);
      return reply.code(200).send({ disconnected: con.id });
    });
  }
}
