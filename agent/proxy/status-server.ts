import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MeshMetrics } from '../../runtime/index.js';
import { runAppProbe, type AppProbe } from './app-probers.js';

export interface StatusServerOptions {
  /** Why the proxy is not ready yet, or undefined when it is. */
  readonly notReady: () => string | undefined | Promise<string | undefined>;
  readonly metrics: MeshMetrics<'pilot-agent'>;
  /** MESH_ORCH_APP_PROBERS: the app's probes, answered on this port. */
  readonly appProbes?: ReadonlyMap<string, AppProbe>;
  /** Where the app listens (`127.0.0.1` in a pod; its private address in the local mesh). */
  readonly appHost?: string;
}

/** The agent's status port (15021): `/healthz/ready` and the agent's own metrics. */
export function newStatusServer(options: StatusServerOptions): { listen(address: string, port: number): Promise<number>; close(): Promise<void> } {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz/ready') {
      void Promise.resolve(options.notReady()).then(
        (reason) => {
          res.writeHead(reason ? 503 : 200, { 'content-type': 'text/plain' });
          res.end(reason ? `${reason}\n` : '');
        },
        (error: Error) => {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end(`${error.message}\n`);
        },
      );
      return;
    }
    const probe = path === undefined ? undefined : options.appProbes?.get(path);
    if (probe) {
      void runAppProbe(probe, options.appHost ?? '127.0.0.1').then((code) => {
        res.writeHead(code);
        res.end();
      });
      return;
    }
    if (path === '/stats/prometheus' || path === '/metrics') {
      void options.metrics.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    res.writeHead(404);
    res.end();
  });
  return {
    async listen(address, port) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => resolve());
      });
      return (server.address() as AddressInfo).port;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
