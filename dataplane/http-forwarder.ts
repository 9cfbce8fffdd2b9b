import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import { applyHeaderMutations, type HttpDecision } from './decisions/index.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { HeaderEdits } from './request-telemetry.js';
import type { BodyPrefix } from './request-body.js';
import type { SecretSet } from './sds-subscriber.js';
import { upstreamTlsOptions, type UpstreamAgents, type UpstreamTarget } from './upstream-connector.js';

/** Envoy's limit on upstream response headers (60 KiB), above Node's 16 KiB. */
const MAX_RESPONSE_HEADER_BYTES = 60 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** A request's headers as the decisions read them (see HttpRequestFacts). */
export interface RequestHeaderFacts {
  readonly headers: Record<string, string>;
  readonly repeatedHeaders?: Record<string, string[]>;
}

/**
 * Headers from the raw list Node received (its `headers` object drops repeated `authorization`,
 * `host` and others, and joins the rest with `, `): lower-case names, repeated values joined with
 * `,` as Envoy does (`; ` for cookies), and each value of a repeated header kept.
 */
export function requestHeaderFacts(rawHeaders: readonly string[]): RequestHeaderFacts {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  let repeatedHeaders: Record<string, string[]> | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    const existing = headers[name];
    if (existing === undefined) {
      headers[name] = value;
      continue;
    }
    headers[name] = `${existing}${name === 'cookie' ? '; ' : ','}${value}`;
    repeatedHeaders ??= Object.create(null) as Record<string, string[]>;
    const values = repeatedHeaders[name];
    if (values) values.push(value);
    else repeatedHeaders[name] = [existing, value];
  }
  return repeatedHeaders ? { headers, repeatedHeaders } : { headers };
}

export function respond(res: ServerResponse, status: number, body: string, headers: Readonly<Record<string, string | readonly string[]>> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), server: 'envoy', ...headers });
  res.end(body);
}

export interface ForwardOptions {
  readonly decision: Extract<HttpDecision, { kind: 'forward' }>;
  readonly target: UpstreamTarget;
  readonly secrets: SecretSet;
  readonly downstreamTls: boolean;
  readonly stats: DataPlaneStats;
  readonly agents: UpstreamAgents;
  /** Sees what the request metrics need: the upstream response, failures as response flags, the body size. */
  readonly observer?: ForwardObserver;
  /** Header edits on top of the decision's (the peer-metadata exchange), applied after them. */
  readonly edits?: HeaderEdits;
  /** The body's first bytes, read already (for an authorization check): sent first, then the rest of the request. */
  readonly bodyPrefix?: BodyPrefix;
}

export interface ForwardObserver {
  /** The upstream response's headers and the upstream certificate's first URI SAN (TLS upstreams). */
  response(headers: IncomingMessage['headers'], peerUri: string | undefined): void;
  /** An Envoy response flag: `UT`, `UF`, `UC`, `URX`. */
  flag(flag: string): void;
  requestBytes(bytes: number): void;
}

/** Kept on a pooled upstream socket: its peer's URI SAN (null: none), read once per connection. */
const PEER_URI = Symbol('mesh.upstream-peer-uri');

/**
 * The upstream certificate's first URI SAN, for the request metrics. Read from the TLS session
 * once per connection (each read copies the whole certificate into JavaScript): a session's peer
 * certificate is the one its handshake verified, for the life of the connection.
 */
function peerUriOf(response: IncomingMessage): string | undefined {
  const socket = response.socket as (IncomingMessage['socket'] & { getPeerCertificate?: () => { subjectaltname?: string }; [PEER_URI]?: string | null }) | null;
  if (!socket) return undefined;
  let uri = socket[PEER_URI];
  if (uri === undefined) {
    const sans = socket.getPeerCertificate?.()?.subjectaltname ?? '';
    uri = socket[PEER_URI] =
      sans
        .split(', ')
        .find((entry) => entry.startsWith('URI:'))
        ?.slice(4) ?? null;
  }
  return uri ?? undefined;
}

function upstreamHeaders(req: IncomingMessage, options: ForwardOptions): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = Object.create(null) as OutgoingHttpHeaders;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    // HTTP/2 pseudo-headers describe the request line; the HTTP/1.1 upstream gets a real one.
    if (HOP_BY_HOP.has(name) || name.startsWith(':')) continue;
    const existing = headers[name];
    // A repeated header goes upstream as it came, one line per value (cookies as one line).
    if (existing === undefined) headers[name] = value;
    else if (name === 'cookie') headers[name] = `${String(existing)}; ${value}`;
    else headers[name] = [...(Array.isArray(existing) ? existing : [String(existing)]), value];
  }
  const { decision, edits } = options;
  for (const name of decision.headersToRemove) delete headers[name];
  for (const name of edits?.requestRemove ?? []) delete headers[name];
  Object.assign(headers, decision.headersToSet, edits?.requestSet);
  headers['host'] = decision.host;
  headers['x-forwarded-proto'] ??= options.downstreamTls ? 'https' : 'http';
  headers['x-request-id'] ??= randomUUID();
  return headers;
}

const REPLAYABLE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * Whether a request may be sent again on a new connection after a pooled one failed under it:
 * without a body, and safe by its method or marked idempotent by the client. An upstream closes
 * an idle keep-alive connection (Node's servers after 5 s) whenever it likes; a request written
 * as the close crosses it fails without having been read, and is not the client's failure.
 */
function isReplayable(req: IncomingMessage, hasBody: boolean): boolean {
  if (hasBody) return false;
  return REPLAYABLE_METHODS.has(req.method ?? 'GET') || req.headers['idempotency-key'] !== undefined || req.headers['x-idempotency-key'] !== undefined;
}

function isRetriable(retryOn: readonly string[], failure: 'connect' | 'reset' | number): boolean {
  if (typeof failure === 'number') {
    return (
      (retryOn.includes('5xx') && failure >= 500) ||
      (retryOn.includes('gateway-error') && failure >= 502 && failure <= 504) ||
      retryOn.includes(String(failure))
    );
  }
  if (failure === 'connect') return retryOn.some((on) => on === 'connect-failure' || on === '5xx' || on === 'gateway-error' || on === 'reset');
  return retryOn.includes('reset') || retryOn.includes('5xx');
}

/**
 * Streams the upstream response's body downstream with backpressure, as `pipe` does but with a
 * third of its listeners per request; a downstream that goes away first resets the upstream
 * response (as Envoy resets the upstream stream), which frees its connection.
 */
function relayBody(response: IncomingMessage, res: ServerResponse): void {
  response.on('data', (chunk: Buffer) => {
    if (res.write(chunk)) return;
    response.pause();
    res.once('drain', () => response.resume());
  });
  response.on('end', () => res.end());
  response.on('error', () => res.destroy());
  res.once('close', () => {
    if (!response.complete) response.destroy();
    else response.resume();
  });
}

/**
 * Sends one request upstream as the router filter does: the route's timeout (504), a failed
 * connection or a reset before the response (503), retries per the route's policy for requests
 * without a body, and the response streamed back without hop-by-hop headers.
 */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
  const { decision, target, stats } = options;
  const headers = upstreamHeaders(req, options);
  const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
  const retry = decision.route.retry;
  let attemptsLeft = hasBody ? 0 : (retry?.numRetries ?? 0);
  const timeoutMs = decision.route.timeoutMs;
  let finished = false;
  const timer = timeoutMs > 0 ? setTimeout(() => fail(504, 'upstream request timeout', 'UT'), timeoutMs) : undefined;
  const replayable = isReplayable(req, hasBody);
  const retried = (): boolean => attemptsLeft < (hasBody ? 0 : (retry?.numRetries ?? 0));
  const fail = (status: number, body: string, flag: string): void => {
    if (finished) return;
    finished = true;
    if (retried() && flag !== 'UT') options.observer?.flag('URX');
    options.observer?.flag(flag);
    if (timer) clearTimeout(timer);
    stats.inc(`cluster.${decision.route.cluster}.upstream_rq_${status}`);
    respond(res, status, body);
  };

  const attempt = (): void => {
    const tls = target.tls.kind === 'tls' ? upstreamTlsOptions(target.tls, options.secrets, options.agents.secureContexts) : undefined;
    const send = tls ? httpsRequest : httpRequest;
    const upstream = send({
      host: target.address,
      port: target.port,
      method: req.method,
      path: decision.path,
      headers,
      maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      agent: target.tls.kind === 'tls' ? options.agents.tlsFor(target.tls) : options.agents.plain,
      ...(tls ?? {}),
    });
    let responded = false;
    upstream.on('response', (response) => {
      responded = true;
      const status = response.statusCode ?? 502;
      if (attemptsLeft > 0 && retry && isRetriable(retry.retryOn, status)) {
        attemptsLeft--;
        response.resume();
        attempt();
        return;
      }
      if (finished) {
        response.resume();
        return;
      }
      finished = true;
      if (timer) clearTimeout(timer);
      stats.inc(`cluster.${decision.route.cluster}.upstream_rq_${status}`);
      options.observer?.response(response.headers, target.tls.kind === 'tls' ? peerUriOf(response) : undefined);
      const outHeaders: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(response.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) outHeaders[name] = value;
      const edits = decision.route.responseHeaders;
      for (const name of edits.remove) delete outHeaders[name];
      for (const name of options.edits?.responseRemove ?? []) delete outHeaders[name];
      Object.assign(outHeaders, edits.set, options.edits?.responseSet);
      for (const [name, value] of Object.entries(edits.append)) {
        const existing = outHeaders[name];
        outHeaders[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [String(existing)]), value];
      }
      if (decision.responseHeaderMutations)
        applyHeaderMutations(outHeaders as Record<string, string | string[]>, decision.responseHeaderMutations, { joined: false });
      res.writeHead(status, outHeaders);
      relayBody(response, res);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (responded) {
        res.destroy();
        return;
      }
      // A stale pooled connection: the pool has dropped it, so this goes out on another (each
      // replay consumes one pooled connection; a fresh connection that fails ends it).
      if (!finished && upstream.reusedSocket && replayable && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        attempt();
        return;
      }
      const connectFailure =
        error.code === 'ECONNREFUSED' || error.code === 'ENOTFOUND' || error.code === 'EHOSTUNREACH' || (error.code === 'ECONNRESET' && !upstream.reusedSocket);
      if (attemptsLeft > 0 && retry && isRetriable(retry.retryOn, connectFailure ? 'connect' : 'reset')) {
        attemptsLeft--;
        attempt();
        return;
      }
      stats.inc(`cluster.${decision.route.cluster}.upstream_cx_connect_fail`);
      const reason = connectFailure ? 'connection failure' : 'remote reset';
      fail(
        503,
        `upstream connect error or disconnect/reset before headers. reset reason: ${reason}, transport failure reason: ${error.message}`,
        connectFailure ? 'UF' : 'UC',
      );
    });
    const prefix = options.bodyPrefix;
    if (prefix) {
      // Read already for a check: what was read goes first, then whatever is left of the stream.
      let bytes = 0;
      for (const chunk of prefix.chunks) {
        bytes += chunk.length;
        upstream.write(chunk);
      }
      if (prefix.ended) {
        options.observer?.requestBytes(bytes);
        upstream.end();
      } else {
        req.on('data', (chunk: Buffer) => void (bytes += chunk.length));
        req.on('end', () => options.observer?.requestBytes(bytes));
        req.pipe(upstream);
      }
    } else if (hasBody && attemptsLeft === 0) {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => void (bytes += chunk.length));
      req.on('end', () => options.observer?.requestBytes(bytes));
      req.pipe(upstream);
    } else upstream.end();
  };
  res.on('close', () => {
    if (timer) clearTimeout(timer);
  });
  attempt();
}
