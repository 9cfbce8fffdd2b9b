import type { JWTPayload } from 'jose';
import type { JwtFailure } from './jwt-failure.js';

/**
 * One kind of request a data plane served, as its traffic record keeps it: the inputs its decisions
 * read (never a token or a secret) and what they answered. Plain data, so meshctl can replay it
 * through the same decision functions with another configuration.
 */
export interface RecordedRequest {
  /** The listener that took the connection. */
  readonly listener: string;
  readonly direction: 'inbound' | 'outbound' | 'gateway';
  readonly connection: RecordedConnection;
  readonly request: RecordedHttp;
  /** The tokens the request carried, by what they claimed; the tokens themselves are never kept. */
  readonly tokens?: readonly RecordedToken[];
  readonly verdict: RequestVerdict;
}

/** A recorded request with how often and when the data plane saw it. */
export interface RecordedSightings extends RecordedRequest {
  readonly count: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
}

export interface RecordedConnection {
  readonly destinationAddress: string;
  readonly destinationPort: number;
  readonly sourceAddress: string;
  readonly transportProtocol: 'tls' | 'raw_buffer';
  readonly serverName?: string;
  readonly applicationProtocols?: readonly string[];
  /** The verified client certificate's SANs (mutual TLS); absent for plain text. */
  readonly peerUriSans?: readonly string[];
  readonly peerDnsSans?: readonly string[];
}

export interface RecordedHttp {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly protocol?: string;
  /** Only the headers some policy or route of the proxy names; the others are dropped. */
  readonly headers: Readonly<Record<string, string>>;
}

/** A token in a header or a query parameter, by the claims a policy can read and whether the data plane accepted it. */
export interface RecordedToken {
  readonly header?: string;
  /** What stood before the token in the header value (`Bearer `). */
  readonly prefix?: string;
  readonly param?: string;
  /** Issuer, subject, audiences, times, and the claims some policy of the proxy names. */
  readonly claims: Readonly<JWTPayload>;
  /** Why the data plane refused it, when it did for a reason other than its claims (a bad signature, an unknown key, malformed). */
  readonly failure?: JwtFailure;
  /** The data plane checked its signature and took it; otherwise a replay reads claims nobody verified. */
  readonly verified?: boolean;
}

/** What the proxy did with a request: refused the connection, answered itself, or forwarded it. */
export interface RequestVerdict {
  readonly outcome: 'reset' | 'respond' | 'forwarded';
  readonly status?: number;
  /** The filter that answered: `jwt`, `rbac`, `ext_authz`, `router`, `path`, or `filter chain` for a reset. */
  readonly by?: string;
  /** The deciding policy: the one that denied, or the ALLOW policy that granted (`ns[..]-policy[..]-rule[..]`). */
  readonly policy?: string;
}

/** Looks up a token the traffic record stood in for: its recorded claims in place of a signature check. */
export type RecordedTokenVerifier = (token: string) => RecordedToken | undefined;
