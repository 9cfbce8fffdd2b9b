import type { FastifyInstance } from 'fastify';
import { newFastifyRunnable, type HttpServerRunnable } from './http-server.js';
import { parseListenAddress } from './listen-address.js';
import type { Logger } from './log/logger.js';
import type { MeshMetrics } from './metrics.js';

export interface MonitoringServerOptions {
  /** Go-style: `:15014` (all interfaces) or `host:port`. */
  address: string;
  metrics: MeshMetrics;
  buildInfo: Record<string, string>;
  log: Logger;
  /** Further routes on the same port (debug endpoints), registered before it listens. */
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>;
}

/** The self-monitoring server (`--monitoringAddr`): GET /metrics and GET /version. */
export function newMonitoringServer(options: MonitoringServerOptions): HttpServerRunnable {
  const { host, port } = parseListenAddress(options.address);
  const { registry } = options.metrics;
  return newFastifyRunnable({
    name: 'monitoring',
    host,
    port,
    log: options.log,
    configure: async (app) => {
      app.get('/metrics', async (_request, reply) => {
        const text = await registry.metrics();
        return reply.header('content-type', registry.contentType).send(text);
      });
      app.get('/version', async () => options.buildInfo);
      await options.extraRoutes?.(app);
    },
  });
}
