import type { FastifyInstance } from 'fastify';
import { healthHttpHandler, type HealthChecks } from './health.js';
import { newFastifyRunnable, type HttpServerRunnable } from './http-server.js';
import { parseListenAddress } from './listen-address.js';
import type { Logger } from './log/logger.js';

export interface HealthServerOptions {
  name: string;
  /** Go-style listen address: `:8080` or `host:port`. */
  address: string;
  health: HealthChecks;
  log: Logger;
  /** Default `/ready`. */
  readinessPath?: string;
  /** Default `/healthz`. */
  livenessPath?: string;
  /** Further routes on the same port (debug endpoints), registered before it listens. */
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>;
}

/** An HTTP server answering liveness and readiness from the manager's checks. */
export function newHealthServer(options: HealthServerOptions): HttpServerRunnable {
  const { host, port } = parseListenAddress(options.address);
  const routes: Array<[string, 'liveness' | 'readiness']> = [
    [options.readinessPath ?? '/ready', 'readiness'],
    [options.livenessPath ?? '/healthz', 'liveness'],
  ];
  return newFastifyRunnable({
    name: options.name,
    host,
    port,
    log: options.log,
    configure: async (app) => {
      for (const [path, kind] of routes) {
        const handler = healthHttpHandler(options.health, kind);
        app.route({
          method: ['GET', 'HEAD'],
          url: path,
          handler: async (request, reply) => {
            reply.hijack();
            await handler(request.raw, reply.raw);
          },
        });
      }
      await options.extraRoutes?.(app);
    },
  });
}
