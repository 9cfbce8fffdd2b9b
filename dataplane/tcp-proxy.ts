import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../runtime/index.js';
import { arrivalOf, upstreamOf, type ConnectionContext } from './connection-context.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { DecisionInputs } from './decision-inputs.js';
import { networkExtAuthzCounters, type AcceptedChain, type TcpDecision } from './decisions/index.js';
import type { OpenSockets } from './open-sockets.js';
import { isMeshMutualTls, type RequestTelemetry } from './request-telemetry.js';
import type { SecretSet } from './sds-subscriber.js';
import { connectUpstream, type UpstreamAgents } from './upstream-connector.js';
import { connectionEntryFacts, hostPort, rbacDeniedDetails } from './access-log-entry.js';
import type { AccessLogWriter } from './access-log-writer.js';

export interface TcpProxyOptions {
  inputs: DecisionInputs;
  telemetry: RequestTelemetry;
  stats: DataPlaneStats;
  agents: UpstreamAgents;
  secrets: () => SecretSet;
  sockets: OpenSockets;
  connectTimeoutMs: number;
  /** Where ORIGINAL_DST inbound traffic goes. */
  appAddress?: string;
  accessLogs: AccessLogWriter;
  log: Logger;
}

/**
 * Serves a connection on a TCP proxy chain: the chain's network filters decide (RBAC, ext_authz),
 * then the bytes are piped to the upstream and back. `stream` is what the client speaks on (the
 * decrypted stream once TLS is terminated), `raw` the TCP socket under it, reset on an RBAC denial.
 */
export type TcpProxy = (stream: Duplex, chain: AcceptedChain, context: ConnectionContext, raw: Socket) => void;

export function newTcpProxy(options: TcpProxyOptions): TcpProxy {
  const { inputs, telemetry, stats, log } = options;

  /** One access-log entry per connection (the chain's logs), written when it ends: Envoy's TCP proxy fields. */
  const connectionLog = (chain: AcceptedChain, context: ConnectionContext) => {
    const startTime = new Date();
    const started = performance.now();
    const entry = { bytesReceived: 0, bytesSent: 0, upstreamHost: undefined as string | undefined, upstreamCluster: undefined as string | undefined };
    let written = false;
    return {
      entry,
      write(ending: { readonly flags?: string; readonly terminationDetails?: string } = {}): void {
        if (written || chain.accessLogs.length === 0) return;
        written = true;
        options.accessLogs.write(chain.accessLogs, {
          startTime,
          responseCode: 0,
          responseFlags: ending.flags ?? '',
          ...(ending.terminationDetails ? { connectionTerminationDetails: ending.terminationDetails } : {}),
          bytesReceived: entry.bytesReceived,
          bytesSent: entry.bytesSent,
          durationMs: performance.now() - started,
          ...(entry.upstreamHost ? { upstreamHost: entry.upstreamHost } : {}),
          ...(entry.upstreamCluster ? { upstreamCluster: entry.upstreamCluster } : {}),
          ...connectionEntryFacts(context, inputs.localUriSan()),
        });
      },
    };
  };

  const proxy = (socket: Duplex, decision: TcpDecision, context: ConnectionContext, raw: Socket, chain: AcceptedChain): void => {
    inputs.countExtAuthz(decision, networkExtAuthzCounters);
    const logged = connectionLog(chain, context);
    if (decision.kind === 'reset' && decision.by === 'ext_authz') {
      // Envoy closes the connection (no reset) when the authorization server denies it.
      logged.write({ flags: 'UAEX' });
      socket.destroy();
      return;
    }
    if (decision.kind === 'reset') {
      stats.inc('tcp.rbac.denied');
      logged.write({ terminationDetails: rbacDeniedDetails(decision.rbac) });
      raw.resetAndDestroy();
      return;
    }
    if (socket.destroyed) return;
    logged.entry.upstreamCluster = decision.upstream.cluster;
    const upstream = upstreamOf(decision.upstream, context, options.appAddress);
    if ('status' in upstream) {
      logged.write({ flags: decision.upstream.kind === 'no-healthy-upstream' ? 'UH' : 'NC' });
      socket.destroy();
      return;
    }
    logged.entry.upstreamHost = hostPort(upstream.address, upstream.port);
    let remote: Socket;
    try {
      remote = connectUpstream(upstream, options.secrets(), options.connectTimeoutMs, options.agents.secureContexts);
    } catch {
      logged.write({ flags: 'UF' });
      socket.destroy();
      return;
    }
    options.sockets.track(remote);
    const tcp = telemetry.beginTcp(arrivalOf(context), decision.upstream.cluster, isMeshMutualTls(decision.upstream));
    let connected = false;
    remote.once('connect', () => (connected = true));
    remote.once('secureConnect', () => (connected = true));
    socket.on('data', (chunk: Buffer) => {
      tcp.received(chunk.length);
      logged.entry.bytesReceived += chunk.length;
    });
    remote.on('data', (chunk: Buffer) => {
      tcp.sent(chunk.length);
      logged.entry.bytesSent += chunk.length;
    });
    remote.once('close', () => {
      tcp.closed();
      logged.write(connected ? {} : { flags: 'UF' });
    });
    socket.pipe(remote).pipe(socket);
    const destroyBoth = (): void => {
      socket.destroy();
      remote.destroy();
    };
    remote.on('error', destroyBoth);
    socket.on('error', destroyBoth);
  };

  return (socket, chain, context, raw) => {
    chain.tcp(inputs.requestContext(context)).then(
      (decision) => proxy(socket, decision, context, raw, chain),
      (error: Error) => {
        log.error({ error: error.message }, 'connection decision failed');
        socket.destroy();
      },
    );
  };
}
