import type { HttpDecision } from './decision-types.js';
import type { ConnectionFacts, HttpRequestFacts } from './facts.js';
import type { RecordedRequest, RecordedToken, RecordedTokenVerifier, RequestVerdict } from './recorded-request.js';

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
