import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { envoyConfigDump } from './admin-config-dump.js';
import { clustersJson, clustersText } from './admin-clusters.js';
import type { EnvoyLoggers } from './admin-loggers.js';
import type { ConfigState } from './config-state.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { SecretSet } from './sds-subscriber.js';
import type { TrafficRecordView } from './traffic-record.js';

export interface AdminServerOptions {
  state: ConfigState;
  stats: DataPlaneStats;
  /** Whether the first listeners and clusters were accepted. */
  isReady: () => boolean;
  /** Bound data-plane addresses, for `/listeners`. */
  addresses: () => ReadonlyMap<string, { address: string; port: number }>;
  /** The bootstrap the data plane started from (`/config_dump`'s BootstrapConfigDump). */
  bootstrap: Record<string, unknown>;
  /** The SDS secrets held (`/config_dump`'s SecretsConfigDump, key material redacted). */
  secrets: () => SecretSet | undefined;
  /** `/logging`: Envoy's loggers and their levels. */
  loggers?: EnvoyLoggers;
  /** `POST /quitquitquit`. */
  quit?: () => void;
  /** `POST /drain_listeners[?inboundonly]`. */
  drain?: (inboundOnly: boolean) => void;
  /** `/recent_requests`: the traffic record, when it is on. */
  recentRequests?: () => TrafficRecordView | undefined;
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
  // When each type was last accepted: `last_updated` in the config dump.
  const updatedAt = new Map<string, Date>([['bootstrap', new Date()]]);
  let versions = new Map<string, string>();
  state.onChange((snapshot) => {
    for (const [typeUrl, version] of snapshot.versions) if (versions.get(typeUrl) !== version) updatedAt.set(typeUrl, new Date());
    versions = new Map(snapshot.versions);
  });
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
        const mask = url.searchParams.get('mask');
        const resource = url.searchParams.get('resource');
        const dump = envoyConfigDump(
          { bootstrap: options.bootstrap, snapshot: state.current(), secrets: options.secrets(), updatedAt, rejections: state.rejections() },
          { includeEds: url.searchParams.has('include_eds'), ...(resource ? { resource } : {}), ...(mask ? { mask: mask.split(',') } : {}) },
        );
        return send(res, 200, JSON.stringify(dump, null, 2), 'application/json');
      }
      case '/clusters':
        return url.searchParams.get('format') === 'json'
          ? send(res, 200, JSON.stringify(clustersJson(state.current()), null, 2), 'application/json')
          : send(res, 200, clustersText(state.current()));
      case '/listeners': {
        const bound = Object.fromEntries(options.addresses());
        return send(
          res,
          200,
          JSON.stringify({ listeners: state.current().resources.listeners.map((listener) => listener.name), bound }, null, 2),
          'application/json',
        );
      }
      case '/stats':
        return send(
          res,
          200,
          `${stats
            .entries()
            .map(([name, value]) => `${name}: ${value}`)
            .join('\n')}\n`,
        );
      case '/logging': {
        const loggers = options.loggers;
        if (!loggers) return send(res, 404, 'not found\n');
        const changes = [...url.searchParams];
        if (changes.length > 0 && !post) return send(res, 405, 'This operation requires a POST method\n');
        for (const [name, level] of changes) {
          const error = loggers.set(name, level);
          if (error) return send(res, 404, `${error}\n${loggers.text()}`);
        }
        return send(res, 200, loggers.text());
      }
      case '/recent_requests': {
        const view = options.recentRequests?.();
        return view ? send(res, 200, JSON.stringify(view), 'application/json') : send(res, 404, 'the traffic record is off\n');
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
