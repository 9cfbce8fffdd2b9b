import type { ExtAuthzBodySettings, ExtAuthzHttpService } from './ext-authz-config.js';
import type { AddressMessage, BufferedRequestBody, CheckRequestMessage, ExtAuthzHttpCall, HttpRequestMessage, PeerMessage } from './ext-authz-types.js';
import type { ConnectionFacts, HttpRequestFacts } from './facts.js';

/** Envoy tells the server whether the body it got was cut at `max_request_bytes`. */
export const PARTIAL_BODY_HEADER = 'x-envoy-auth-partial-body';

/** What a check knows of the connection beyond its facts. */
export interface CheckConnection {
  readonly connection: ConnectionFacts;
  /** The URI SAN of this proxy's certificate. */
  readonly localUriSan?: string;
  /** Whether this chain terminated TLS (then this proxy's certificate is the destination's). */
  readonly terminatesTls: boolean;
}

/** The request as the check sees it, with the body buffered when the filter asks for it. */
export interface CheckHttpRequest {
  readonly request: HttpRequestFacts;
  readonly body?: { readonly settings: ExtAuthzBodySettings; readonly buffered: BufferedRequestBody };
  readonly now: Date;
  /** The stream id (`request.http.id`). */
  readonly streamId: number;
}

/**
 * The check request to an HTTP server: the original method, `path_prefix` + the original path,
 * only Host, Authorization and the headers `allowed_headers` matches (Content-Length is the
 * check's own body length), then `headers_to_add` over them, and the partial-body flag when the
 * body is buffered.
 */
export function buildHttpCheckCall(service: ExtAuthzHttpService, check: CheckHttpRequest): ExtAuthzHttpCall {
  const { request } = check;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'authorization' || (service.allowedHeaders?.(name) ?? false)) headers[name] = value;
  }
  headers['host'] = request.host;
  for (const [name, value] of service.headersToAdd) headers[name] = value;
  const body = check.body?.buffered.bytes ?? new Uint8Array(0);
  if (check.body) headers[PARTIAL_BODY_HEADER] = String(check.body.buffered.truncated);
  headers['content-length'] = String(body.length);
  return { cluster: service.cluster, timeoutMs: service.timeoutMs, method: request.method, path: `${service.pathPrefix}${request.path}`, headers, body };
}

function addressOf(address: string, port: number | undefined): AddressMessage {
  return { socket_address: { address, port_value: port ?? 0 } };
}

/** The peer certificate's principal: its first URI SAN, else its subject; empty in plain text. */
function peerPrincipal(connection: ConnectionFacts): string {
  const certificate = connection.peerCertificate;
  if (!certificate) return '';
  return certificate.uriSans[0] ?? certificate.subject;
}

function peers(check: CheckConnection): { source: PeerMessage; destination: PeerMessage } {
  const { connection } = check;
  return {
    source: { address: addressOf(connection.sourceAddress, connection.sourcePort), principal: peerPrincipal(connection) },
    destination: {
      address: addressOf(connection.destinationAddress, connection.destinationPort),
      principal: check.terminatesTls ? (check.localUriSan ?? '') : '',
    },
  };
}

/** The network filter's CheckRequest: the source and destination of the connection only. */
export function buildNetworkCheckRequest(check: CheckConnection): CheckRequestMessage {
  return { attributes: peers(check) };
}

/**
 * The HTTP filter's CheckRequest to a gRPC server: the peers, and the request with every header
 * (lower-case, repeated ones comma-joined; the pseudo-headers as Envoy holds them), the path with
 * its query, the size from Content-Length (-1 when unknown), and the body when buffered.
 */
export function buildHttpCheckRequest(check: CheckConnection, http: CheckHttpRequest): CheckRequestMessage {
  const { request } = http;
  const scheme = check.terminatesTls ? 'https' : 'http';
  const headers: Record<string, string> = { ':authority': request.host, ':method': request.method, ':path': request.path, ':scheme': scheme };
  for (const [name, value] of Object.entries(request.headers)) if (name !== 'host') headers[name] = value;
  if (http.body) headers[PARTIAL_BODY_HEADER] = String(http.body.buffered.truncated);
  const length = request.headers['content-length'];
  const size = length !== undefined && /^\d+$/.test(length) ? Number(length) : -1;
  const body = http.body
    ? http.body.settings.packAsBytes
      ? { raw_body: http.body.buffered.bytes }
      : { body: Buffer.from(http.body.buffered.bytes).toString('utf8') }
    : {};
  const millis = http.now.getTime();
  const message: HttpRequestMessage = {
    id: String(http.streamId),
    method: request.method,
    headers,
    path: request.path,
    host: request.host,
    scheme,
    protocol: request.protocol ?? 'HTTP/1.1',
    size,
    ...body,
  };
  return { attributes: { ...peers(check), request: { time: { seconds: Math.floor(millis / 1000), nanos: (millis % 1000) * 1_000_000 }, http: message } } };
}
