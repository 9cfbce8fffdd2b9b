import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConfigState } from './config-state.js';
import type { ConnectionContext, ConnectionContexts } from './connection-context.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { AcceptedChain, ConnectionFacts } from './decisions/index.js';
import type { DownstreamHttp } from './downstream-http.js';
import type { DownstreamTlsTerminator } from './downstream-tls.js';
import type { OpenSockets } from './open-sockets.js';
import { sniffConnection } from './sniffed-socket.js';
import type { TcpProxy } from './tcp-proxy.js';

export interface ConnectionAcceptorOptions {
  state: ConfigState;
  stats: DataPlaneStats;
  sockets: OpenSockets;
  contexts: ConnectionContexts;
  http: DownstreamHttp;
  terminateTls: DownstreamTlsTerminator;
  proxyTcp: TcpProxy;
  /** How long the listener filters wait for the first bytes before deciding on what they have. */
  sniffTimeoutMs: number;
}

/**
 * Takes a socket a listener accepted, paused, as Envoy's listener does: the listener filters read
 * its first bytes (TLS or HTTP), the filter chain is chosen (or the connection reset), then TLS is
 * terminated if the chain says so and the connection handed to HTTP or the TCP proxy. The
 * outbound capture port takes HTTP proxy-form requests only, and goes to HTTP straight away.
 */
export type ConnectionAcceptor = (socket: Socket, listener: string, direction: ConnectionContext['direction']) => Promise<void>;

/** The connection's addresses, as the listener filters see them. */
function addressFacts(socket: Socket, local: AddressInfo): Pick<ConnectionFacts, 'destinationAddress' | 'destinationPort' | 'sourceAddress' | 'sourcePort'> {
  return {
    destinationAddress: local.address,
    destinationPort: local.port,
    sourceAddress: socket.remoteAddress ?? '',
    ...(socket.remotePort !== undefined ? { sourcePort: socket.remotePort } : {}),
  };
}

export function newConnectionAcceptor(options: ConnectionAcceptorOptions): ConnectionAcceptor {
  const { state, stats, sockets, contexts, http } = options;

  /** `resume`: the stream is the paused raw socket (see `DownstreamHttp.serve`). */
  const serveChain = (stream: Duplex, chain: AcceptedChain, context: ConnectionContext, raw: Socket, protocols: readonly string[], resume: boolean): void => {
    if (chain.protocol === 'http') {
      contexts.attach(stream, context);
      http.serve(stream, protocols, resume);
    } else options.proxyTcp(stream, chain, context, raw);
  };

  return async (socket, listener, direction) => {
    sockets.track(socket);
    socket.on('error', () => socket.destroy());
    stats.inc('downstream_cx_total');
    const local = socket.address() as AddressInfo;
    if (direction === 'outbound') {
      contexts.attach(socket, { listener, direction, tls: false, facts: { ...addressFacts(socket, local), transportProtocol: 'raw_buffer' } });
      http.serve(socket, [], true);
      return;
    }
    const { result: sniffed, stream, isRaw } = await sniffConnection(socket, options.sniffTimeoutMs);
    const facts: ConnectionFacts = {
      ...addressFacts(socket, local),
      transportProtocol: sniffed.kind === 'tls' ? 'tls' : 'raw_buffer',
      ...(sniffed.kind === 'tls' && sniffed.serverName ? { serverName: sniffed.serverName } : {}),
      applicationProtocols: sniffed.applicationProtocols,
    };
    const name = direction === 'inbound' ? (state.current().decisions.listenerFor('inbound', local.address, local.port) ?? 'virtualInbound') : listener;
    const decision = state.current().decisions.connection(name, facts);
    if (decision.kind === 'reset') {
      stats.inc('listener.no_filter_chain_match');
      socket.resetAndDestroy();
      return;
    }
    const context: ConnectionContext = { listener: name, direction, tls: false, facts };
    if (decision.downstreamTls) {
      options.terminateTls(stream, decision.downstreamTls, context, (secure, secured) =>
        serveChain(secure, decision, secured, socket, secure.alpnProtocol === 'h2' ? ['h2'] : [], false),
      );
    } else serveChain(stream, decision, context, socket, sniffed.applicationProtocols, isRaw);
  };
}
