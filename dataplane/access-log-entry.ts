import type { AccessLogEntry, HttpDecision, RbacVerdict } from './decisions/index.js';
import type { ConnectionContext } from './connection-context.js';
import { formatHostPort } from '../runtime/index.js';

/** Envoy's `replaceAllEmptySpace`: details carry no whitespace. */
const noSpace = (text: string): string => text.replace(/\s/g, '_');

/** `rbac_access_denied_matched_policy[<id>]` of the filter that denied, `[none]` when no policy matched (an ALLOW filter that matched nothing). */
export function rbacDeniedDetails(verdicts: readonly RbacVerdict[]): string {
  const denied = verdicts.find((verdict) => !verdict.allowed);
  return `rbac_access_denied_matched_policy[${noSpace(denied?.matchedPolicy ?? 'none')}]`;
}

/** `%RESPONSE_CODE_DETAILS%` of a reply the proxy made itself, as Envoy words each. */
export function localReplyDetails(decision: Extract<HttpDecision, { kind: 'respond' }>): string {
  switch (decision.by) {
    case 'rbac':
      return rbacDeniedDetails(decision.rbac);
    case 'jwt':
      return `jwt_authn_access_denied{${noSpace(decision.body)}}`;
    case 'ext_authz':
      return decision.extAuthz?.some((verdict) => verdict.result === 'error') ? 'ext_authz_error' : 'ext_authz_denied';
    case 'path':
      return 'path_normalization_failed';
    case 'router':
      return decision.route === undefined || decision.route.kind === 'no-route' ? 'route_not_found' : 'direct_response';
  }
}

/** Details of a forwarded request by the response flags it ended with. */
export function forwardedDetails(flags: string): string {
  const set = new Set(flags.split(','));
  if (set.has('UT')) return 'upstream_response_timeout';
  if (set.has('UF')) return 'upstream_reset_before_response_started{connection_failure}';
  if (set.has('UH')) return 'no_healthy_upstream';
  if (set.has('NC')) return 'cluster_not_found';
  if (set.has('DC')) return 'downstream_remote_disconnect';
  return 'via_upstream';
}

/** `address:port`, an IPv6 address in brackets; the address alone without a port. */
export const hostPort = (address: string, port: number | undefined): string => (port === undefined ? address : formatHostPort(address, port));

/** What every entry of a downstream connection shares: its addresses, SNI and peer identity. */
export function connectionEntryFacts(
  context: ConnectionContext,
  localUriSan: string | undefined,
): Pick<AccessLogEntry, 'downstreamLocalAddress' | 'downstreamRemoteAddress' | 'requestedServerName' | 'downstreamPeerUriSan' | 'downstreamLocalUriSan'> {
  const { facts } = context;
  const peer = facts.peerCertificate?.uriSans[0];
  return {
    downstreamLocalAddress: hostPort(facts.destinationAddress, facts.destinationPort),
    downstreamRemoteAddress: hostPort(facts.sourceAddress, facts.sourcePort),
    ...(facts.serverName ? { requestedServerName: facts.serverName } : {}),
    ...(peer ? { downstreamPeerUriSan: peer } : {}),
    ...(context.tls && localUriSan ? { downstreamLocalUriSan: localUriSan } : {}),
  };
}
