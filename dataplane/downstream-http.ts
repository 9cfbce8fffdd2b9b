import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { Logger } from '../runtime/index.js';
import type { ConnectionContext, ConnectionContexts } from './connection-context.js';
import { CountedHttp2ServerResponse, CountedServerResponse } from './counted-response.js';
import { respond } from './http-forwarder.js';

/** Envoy's default limit on the headers of a request or a response. */
export const MAX_HEADER_BYTES = 60 * 1024;

export interface DownstreamHttpOptions {
  contexts: ConnectionContexts;
  /** Serves one request, HTTP/1 or HTTP/2; a rejection is logged and answered 500. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  log: Logger;
}

/** The HTTP/1 and HTTP/2 servers that downstream connections are handed to once a chain speaks HTTP. */
export interface DownstreamHttp {
  /**
   * Serves HTTP on a connection whose context is attached: HTTP/2 when ALPN chose `h2` or the
   * client speaks it in plain text (`h2c`), HTTP/1 otherwise. `resume`: the socket is paused (the
   * HTTP/1 server reads through its events; an HTTP/2 session reads the handle itself).
   */
  serve(socket: Duplex, protocols: readonly string[], resume?: boolean): void;
  closeIdleConnections(): void;
  closeAllConnections(): void;
}

export function newDownstreamHttp(options: DownstreamHttpOptions): DownstreamHttp {
  const { contexts, log } = options;
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    options.handle(req, res).catch((error: Error) => {
      log.error({ error: error.message }, 'request failed');
      respond(res, 500, 'internal error');
    });
  };
  // Envoy's default max_request_headers_kb: 60 KiB of request headers (Node's own limit is 16 KiB).
  const httpServer = createHttpServer({ keepAlive: true, maxHeaderSize: MAX_HEADER_BYTES, ServerResponse: CountedServerResponse }, onRequest);
  // Envoy keeps an idle downstream connection for an hour (idle_timeout); Node's 5 s would make
  // every client pay a new (mutual TLS) handshake after a pause.
  httpServer.keepAliveTimeout = 3_600_000;
  // HTTP/2 (negotiated with ALPN h2, or prior knowledge in plain text) through the same request path.
  const http2Server = createHttp2Server({ Http2ServerResponse: CountedHttp2ServerResponse }, (req: Http2ServerRequest, res: Http2ServerResponse) =>
    onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse),
  );
  // The session is made while its socket is emitted, synchronously: it takes the socket's context.
  let handingOver: ConnectionContext | undefined;
  http2Server.on('session', (session) => {
    if (handingOver) contexts.attachSession(session, handingOver);
  });
  return {
    serve(socket, protocols, resume = false) {
      if (protocols.includes('h2c') || protocols[0] === 'h2') {
        handingOver = contexts.of(socket);
        http2Server.emit('connection', socket);
        handingOver = undefined;
        return;
      }
      httpServer.emit('connection', socket);
      if (resume) socket.resume();
    },
    closeIdleConnections: () => httpServer.closeIdleConnections(),
    closeAllConnections: () => httpServer.closeAllConnections(),
  };
}
