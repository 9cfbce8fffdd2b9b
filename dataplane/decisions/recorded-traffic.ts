import type { JWTPayload } from 'jose';
import type { HttpDecision } from './decision-types.js';
import type { ConnectionFacts, HttpRequestFacts } from './facts.js';
import type { JwtFailure } from './jwt-authn.js';

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

/** The verdict of a decision, with the policy that decided it. */
export function verdictOf(decision: HttpDecision): RequestVerdict {
  const denied = decision.rbac.find((verdict) => !verdict.allowed);
  const granted = [...decision.rbac].reverse().find((verdict) => verdict.allowed && verdict.matchedPolicy !== undefined);
  if (decision.kind === 'forward') return { outcome: 'forwarded', ...(granted?.matchedPolicy ? { policy: granted.matchedPolicy } : {}) };
  const policy = decision.by === 'rbac' ? (denied?.matchedPolicy ?? 'none') : undefined;
  return { outcome: 'respond', status: decision.status, by: decision.by, ...(policy ? { policy } : {}) };
}

/** The same verdict: the same outcome and status, whatever policy decided it. */
export function sameVerdict(a: RequestVerdict, b: RequestVerdict): boolean {
  return a.outcome === b.outcome && a.status === b.status;
}

/** Looks up a token the traffic record stood in for: its recorded claims in place of a signature check. */
export type RecordedTokenVerifier = (token: string) => RecordedToken | undefined;

/** The stand-in token for the `index`th recorded token: what the replayed header carries. */
export const recordedTokenValue = (index: number): string => `recorded-token-${index}`;

/** The facts a replay gives the decision functions for a recorded request, and the verifier of its stand-in tokens. */
export function replayFacts(recorded: RecordedRequest): { connection: ConnectionFacts; request: HttpRequestFacts; tokens: RecordedTokenVerifier } {
  const { connection: c, request: r } = recorded;
  const peer = c.peerUriSans || c.peerDnsSans ? { uriSans: c.peerUriSans ?? [], dnsSans: c.peerDnsSans ?? [], subject: '', sha256: '' } : undefined;
  const connection: ConnectionFacts = {
    destinationAddress: c.destinationAddress,
    destinationPort: c.destinationPort,
    sourceAddress: c.sourceAddress,
    transportProtocol: c.transportProtocol,
    ...(c.serverName ? { serverName: c.serverName } : {}),
    ...(c.applicationProtocols ? { applicationProtocols: c.applicationProtocols } : {}),
    ...(peer ? { peerCertificate: peer } : {}),
  };
  const headers: Record<string, string> = { ...r.headers, host: r.host };
  let path = r.path;
  const byValue = new Map<string, RecordedToken>();
  (recorded.tokens ?? []).forEach((token, index) => {
    const value = recordedTokenValue(index);
    byValue.set(value, token);
    if (token.param !== undefined) path = `${path}${path.includes('?') ? '&' : '?'}${encodeURIComponent(token.param)}=${value}`;
    if (token.header === undefined) return;
    const stood = `${token.prefix ?? ''}${value}`;
    headers[token.header] = headers[token.header] === undefined ? stood : `${headers[token.header]},${stood}`;
  });
  return {
    connection,
    request: { method: r.method, host: r.host, path, headers, ...(r.protocol ? { protocol: r.protocol } : {}) },
    tokens: (token) => byValue.get(token),
  };
}
