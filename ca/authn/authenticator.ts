/** What an authenticator sees of a certificate request. */
export interface AuthContext {
  /** The bearer token of the `authorization` metadata, without the `Bearer ` prefix. */
  readonly bearerToken?: string;
  /** DER certificates the client presented over TLS, leaf first. */
  readonly peerCertificates?: readonly Buffer[];
  /** The cluster the caller says it runs in (the `ClusterID` request metadata), when it says. */
  readonly clusterId?: string;
}

/** Who asked: the identities (SPIFFE URIs) the issued certificate will carry. */
export interface Caller {
  readonly identities: readonly string[];
  /** Which authenticator accepted the caller. */
  readonly authenticator: string;
}

/**
 * One way of proving who the caller is. `authenticate` resolves undefined when the request
 * carries no credential of its kind, and throws (any error; the message is logged, never sent
 * to the caller) when the credential is there but not acceptable.
 */
export interface Authenticator {
  readonly name: string;
  authenticate(context: AuthContext): Promise<Caller | undefined>;
}
