import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../xds/envoy/index.js';
import type { ConfigState } from './config-state.js';
import type { DataPlaneStats } from './data-plane-stats.js';

export interface AdminServerOptions {
  state: ConfigState;
  stats: DataPlaneStats;
  /** Whether the first listeners and clusters were accepted. */
  isReady: () => boolean;
  /** Bound data-plane addresses, for `/listeners`. */
  addresses: () => ReadonlyMap<string, { address: string; port: number }>;
  /** `POST /logging?level=`: returns false for an unknown level. */
  setLogLevel?: (level: string) => boolean;
  /** `POST /quitquitquit`. */
  quit?: () => void;
  /** `POST /drain_listeners[?inboundonly]`. */
  drain?: (inboundOnly: boolean) => void;
}

export interface AdminServer {
  listen(address: string, port: number): Promise<number>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The data plane's admin API (Envoy's paths on 15000): config dump, clusters, listeners, stats
 * (also in Prometheus form, which 15090 serves alone), readiness, log level, drain and quit.
 */
export function newAdminServer(options: AdminServerOptions, paths: 'admin' | 'prometheus' = 'admin'): AdminServer {
  const { state, stats } = options;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://admin');
    if (url.pathname === '/stats/prometheus') return send(res, 200, stats.prometheus(), 'text/plain; version=0.0.4');
    if (paths === 'prometheus') return send(res, 404, 'not found\n');
    const post = req.method === 'POST';
    switch (url.pathname) {
      case '/ready':
        return options.isReady() ? send(res, 200, 'LIVE\n') : send(res, 503, 'PRE_INITIALIZING\n');
      case '/server_info':
        return send(res, 200, JSON.stringify({ state: options.isReady() ? 'LIVE' : 'PRE_INITIALIZING', command_line_options: {} }), 'application/json');
      case '/config_dump': {
        const snapshot = state.current();
        const dump = {
          versions: Object.fromEntries(snapshot.versions),
          rejected: Object.fromEntries(state.rejections()),
          listeners: snapshot.resources.listeners,
          routes: [...snapshot.resources.routes.values()],
          clusters: [...snapshot.resources.clusters.values()],
          endpoints: [...snapshot.resources.endpoints.values()],
          types: [LISTENER_TYPE, ROUTE_TYPE, CLUSTER_TYPE, ENDPOINT_TYPE],
        };
        return send(res, 200, JSON.stringify(dump, null, 2), 'application/json');
      }
      case '/clusters': {
        const lines: string[] = [];
        const snapshot = state.current();
        for (const [name, cluster] of snapshot.resources.clusters) {
          const service = cluster.eds_cluster_config?.service_name || name;
          const assignment = cluster.type === 'STATIC' ? cluster.load_assignment : snapshot.resources.endpoints.get(service);
          for (const locality of assignment?.endpoints ?? []) {
            for (const lb of locality.lb_endpoints ?? []) {
              const socket = lb.endpoint?.address?.socket_address;
              if (socket) lines.push(`${name}::${socket.address}:${socket.port_value ?? 0}::health_flags::${lb.health_status ?? 'healthy'}`);
            }
          }
          lines.push(`${name}::observability_name::${name}`);
        }
        return send(res, 200, `${lines.join('\n')}\n`);
      }
      case '/listeners': {
        const bound = Object.fromEntries(options.addresses());
        return send(res, 200, JSON.stringify({ listeners: state.current().resources.listeners.map((listener) => listener.name), bound }, null, 2), 'application/json');
      }
      case '/stats':
        return send(res, 200, `${stats.entries().map(([name, value]) => `${name}: ${value}`).join('\n')}\n`);
      case '/logging': {
        const level = url.searchParams.get('level');
        if (post && level) {
          return options.setLogLevel?.(level) ? send(res, 200, `level set to ${level}\n`) : send(res, 400, `unknown level "${level}"\n`);
        }
        return send(res, 200, 'usage: POST /logging?level=<trace|debug|info|warning|error|critical|off>\n');
      }
      case '/drain_listeners':
        if (!post) return send(res, 405, 'POST only\n');
        options.drain?.(url.searchParams.has('inboundonly'));
        return send(res, 200, 'OK\n');
      case '/quitquitquit':
        if (!post) return send(res, 405, 'POST only\n');
        send(res, 200, 'OK\n');
        options.quit?.();
        return;
      default:
        return send(res, 404, 'not found\n');
    }
  };
  let server: Server | undefined;
  return {
    async listen(address, port) {
      server = createServer(handle);
      const listening = server;
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(port, address, () => resolve());
      });
      return (listening.address() as AddressInfo).port;
    },
    async close() {
      const closing = server;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
}
