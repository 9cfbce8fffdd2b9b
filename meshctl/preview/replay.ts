import { newAllowingTransport } from '../authz/explain.js';
import { replayFacts, verdictOf, type ProxyDecisions, type RecordedRequest, type RequestVerdict } from '../../dataplane/decisions/index.js';

/**
 * One recorded request through a proxy's decisions, as the data plane would decide it: the
 * listener and filter chain (a refused connection is a reset), the client certificate's SAN, then
 * the HTTP filters and route. Tokens are checked by their recorded claims at the time they were seen;
 * an external authorizer (CUSTOM) cannot be asked, so it is taken to allow, as `x authz explain` does.
 */
export async function replayRequest(decisions: ProxyDecisions, recorded: RecordedRequest, at: Date): Promise<RequestVerdict> {
  const { connection, request, tokens } = replayFacts(recorded);
  const listener = decisions.listenerFor(recorded.direction === 'inbound' ? 'inbound' : 'outbound', connection.destinationAddress, connection.destinationPort);
  if (listener === undefined) return { outcome: 'reset', by: 'listener' };
  const chain = decisions.connection(listener, connection);
  if (chain.kind === 'reset') return { outcome: 'reset', by: recorded.connection.transportProtocol === 'raw_buffer' ? 'STRICT mutual TLS' : 'filter chain' };
  const san = connection.peerCertificate?.uriSans[0];
  const verify = chain.downstreamTls?.verifySubjectAltName;
  if (san !== undefined && verify && !verify(san)) return { outcome: 'reset', by: 'tls' };
  // A TLS connection a chain now passes through untouched: its requests reach the application.
  if (chain.protocol !== 'http') return { outcome: 'forwarded', by: 'tcp' };
  const decision = await chain.http(request, { connection, now: at, random: 0, pick: 0, extAuthz: newAllowingTransport().transport, recordedTokens: tokens });
  return verdictOf(decision);
}
