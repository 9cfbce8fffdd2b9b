import type { FastifyInstance } from 'fastify';
import { debugView, DEBUG_PATHS } from './debug-views.js';
import type { DiscoveryServer } from './discovery-server.js';

/**
 * The xDS debug endpoints, for the daemon's HTTP port (8080, unless ENABLE_DEBUG_ON_HTTP=false)
 * and its monitoring port (15014): `/debug/syncz`, `/debug/adsz`, `/debug/push_status`,
 * `/debug/config_dump?proxyID=<pod>.<namespace>`. No key material in any of them.
 */
export function registerXdsDebugRoutes<C>(app: FastifyInstance, discovery: DiscoveryServer<C>): void {
  for (const path of DEBUG_PATHS) {
    app.get(`/debug/${path}`, async (request, reply) => {
      const view = debugView(discovery, path, new URL(request.url, 'http://debug').searchParams);
      return reply.code(view.status).send(view.body);
    });
  }
}
