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

  const proxy = (socket: Duplex, decision: TcpDecision, context: ConnectionContext, raw: Socket): void => {
    inputs.countExtAuthz(decision, networkExtAuthzCounters);
    if (decision.kind === 'reset' && decision.by === 'ext_authz') {
      // Envoy closes the connection (no reset) when the authorization server denies it.
      socket.destroy();
      return;
    }
    if (decision.kind === 'reset') {
      stats.inc('tcp.rbac.denied');
      raw.resetAndDestroy();
      return;
    }
    if (socket.destroyed) return;
    const upstream = upstreamOf(decision.upstream, context, options.appAddress);
    if ('status' in upstream) {
      socket.destroy();
      return;
    }
    let remote: Socket;
    try {
      remote = connectUpstream(upstream, options.secrets(), options.connectTimeoutMs, options.agents.secureContexts);
    } catch {
      socket.destroy();
      return;
    }
    options.sockets.track(remote);
    const tcp = telemetry.beginTcp(arrivalOf(context), decision.upstream.cluster, isMeshMutualTls(decision.upstream));
    socket.on('data', (chunk: Buffer) => tcp.received(chunk.length));
    remote.on('data', (chunk: Buffer) => tcp.sent(chunk.length));
    remote.once('close', () => tcp.closed());
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
      (decision) => proxy(socket, decision, context, raw),
      (error: Error) => {
        log.error({ error: error.message }, 'connection decision failed');
        socket.destroy();
      },
    );
  };
}
