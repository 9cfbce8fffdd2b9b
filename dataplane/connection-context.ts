import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { ConnectionFacts, UpstreamDecision } from './decisions/index.js';
import type { ArrivalFacts } from './request-telemetry.js';
import type { UpstreamTarget } from './upstream-connector.js';
import { upstreamTarget } from './upstream-target.js';

/** What the listener filters learnt about a downstream connection, and the listener that took it. */
export interface ConnectionContext {
  listener: string;
  facts: ConnectionFacts;
  direction: 'inbound' | 'outbound' | 'gateway';
  tls: boolean;
}

/** Where each downstream connection keeps its context, for the requests that arrive on it. */
export interface ConnectionContexts {
  attach(socket: object, context: ConnectionContext): void;
  of(socket: object | null | undefined): ConnectionContext | undefined;
  /** An HTTP/2 session takes the context of the socket it was made on. */
  attachSession(session: object, context: ConnectionContext): void;
  /** The context of the connection (HTTP/1) or session (HTTP/2) a request came on. */
  ofRequest(req: IncomingMessage): ConnectionContext | undefined;
}

export function newConnectionContexts(): ConnectionContexts {
  // Kept on the socket itself: HTTP/2 hands requests a proxy of the session socket, which reads through to it.
  const CONTEXT = Symbol('mesh.connection-context');
  // An HTTP/2 request reaches its connection through its session, created while the socket is handed over.
  const sessions = new WeakMap<object, ConnectionContext>();
  const of = (socket: object | null | undefined): ConnectionContext | undefined =>
    socket ? ((socket as Record<symbol, unknown>)[CONTEXT] as ConnectionContext | undefined) : undefined;
  return {
    attach: (socket, context) => void ((socket as Record<symbol, unknown>)[CONTEXT] = context),
    of,
    attachSession: (session, context) => void sessions.set(session, context),
    ofRequest: (req) => (req.httpVersionMajor === 2 ? sessions.get((req as unknown as Http2ServerRequest).stream.session as object) : of(req.socket)),
  };
}

/** How the connection arrived, as the request metrics label it. */
export function arrivalOf(context: ConnectionContext): ArrivalFacts {
  const peerUri = context.facts.peerCertificate?.uriSans[0];
  return { direction: context.direction, mutualTls: context.tls && context.facts.peerCertificate !== undefined, ...(peerUri ? { peerUri } : {}) };
}

/** Where an upstream decision connects for a request or connection that came on this connection. */
export function upstreamOf(
  decision: UpstreamDecision,
  context: ConnectionContext,
  appAddress: string | undefined,
  requestHost?: string,
): UpstreamTarget | { status: number; body: string } {
  return upstreamTarget(decision, { direction: context.direction, facts: context.facts, ...(appAddress !== undefined ? { appAddress } : {}) }, requestHost);
}
