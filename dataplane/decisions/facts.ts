/**
 * What the data plane knows about a connection and a request when it decides: the input of every
 * decision function. Plain data, so tests can describe traffic without sockets.
 */

/** The peer's certificate, after the TLS handshake verified it. */
export interface PeerCertificate {
  readonly uriSans: readonly string[];
  readonly dnsSans: readonly string[];
  /** RFC 2253 form, as Envoy prints it (`CN=a,O=b`). */
  readonly subject: string;
  /** Hex SHA-256 of the DER certificate. */
  readonly sha256: string;
  /** The leaf in PEM (XFCC `Cert`). */
  readonly pem?: string;
}

export interface ConnectionFacts {
  /** The original destination: the address and port the client dialled. */
  readonly destinationAddress: string;
  readonly destinationPort: number;
  readonly sourceAddress: string;
  /** The client's port (the ext_authz check's `source.address`). */
  readonly sourcePort?: number;
  /** `tls` when the first bytes are a TLS ClientHello (tls_inspector), else `raw_buffer`. */
  readonly transportProtocol: 'tls' | 'raw_buffer';
  /** SNI of the ClientHello. */
  readonly serverName?: string;
  /** ALPN protocols the client offered (tls_inspector), or `http/1.1`/`h2c` sniffed (http_inspector). */
  readonly applicationProtocols?: readonly string[];
  /** Set once TLS was terminated with a verified client certificate. */
  readonly peerCertificate?: PeerCertificate;
}

/** An HTTP request as the HCM sees it: lower-case header names, pseudo-headers included. */
export interface HttpRequestFacts {
  readonly method: string;
  /** `:authority` (Host). */
  readonly host: string;
  /** `:path`, with the query. */
  readonly path: string;
  /** Lower-case names; repeated headers joined with `,` as Envoy's matchers see them. */
  readonly headers: Readonly<Record<string, string>>;
  /** `HTTP/1.0`, `HTTP/1.1` or `HTTP/2` (the ext_authz check's `request.http.protocol`). */
  readonly protocol?: string;
  /** Headers the request carried more than once, each value as sent (authorization matches them one by one). */
  readonly repeatedHeaders?: Readonly<Record<string, readonly string[]>>;
}

/** Dynamic metadata by filter name (`envoy.filters.http.jwt_authn` → `{ payload: {...} }`). */
export type DynamicMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>;
