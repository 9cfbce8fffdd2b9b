import {
  compileProxyDecisions,
  type AcceptedChain,
  type ConnectionFacts,
  type ExtAuthzTransport,
  type HttpDecision,
  type JwtVerdict,
  type ProxyDecisions,
  type RbacVerdict,
  type UpstreamDecision,
} from '../../dataplane/decisions/index.js';
import { MeshError, errorMessage } from '../../runtime/index.js';
import type { EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import { proxyResourcesOf } from './dump-resources.js';
import { rbacFiltersOfChain, type RbacFilterSummary } from './rbac-filters.js';
import { parsePolicyKey } from '../describe/authz-check.js';

/** The client of the request: plain text, or mutual TLS with a certificate naming this principal. */
export type ExplainSource = { readonly kind: 'plaintext' } | { readonly kind: 'mtls'; readonly principal: string };

export interface ExplainRequest {
  readonly method: string;
  readonly path: string;
  readonly host: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly source: ExplainSource;
  /** The pod address and port the request is sent to. */
  readonly address: string;
  readonly port: number;
  /** The proxy is a gateway: the listener is the one bound to the port, not `virtualInbound`. */
  readonly gateway: boolean;
  readonly now: Date;
}

export interface RbacStep {
  /** DENY, ALLOW, LOG, or CUSTOM: the rules that send a request to an external authorizer. */
  readonly action: string;
  readonly policies: readonly string[];
  /** `matched`/`no match` for an evaluated filter, `not reached` after an earlier denial. */
  readonly result: 'matched' | 'no match' | 'not reached';
  readonly matchedPolicy?: string;
  readonly allowed?: boolean;
  readonly dryRun?: { readonly allowed: boolean; readonly matchedPolicy?: string };
  /** CUSTOM, matched: the authorizer the request is sent to. Its answer decides; explain cannot know it. */
  readonly externalAuthorizer?: { readonly provider: string; readonly cluster?: string };
}

export interface Explanation {
  readonly listener?: string;
  readonly chain?: string;
  /** How the connection was taken, or why it was reset. */
  readonly connection: string;
  /** STRICT, PERMISSIVE or DISABLE, as probed on this port with both kinds of client. */
  readonly mtlsMode?: 'STRICT' | 'PERMISSIVE' | 'DISABLE';
  readonly jwt?: string;
  readonly rbac: readonly RbacStep[];
  readonly route?: string;
  readonly upstream?: string;
  /**
   * The final answer: an HTTP status, `forwarded` to the application, or a connection reset.
   * `ifAllowedBy`: external authorizers the request was sent to, as providers: the answer is
   * what happens when they allow it (a denial answers in their place).
   */
  readonly answer: {
    readonly outcome: 'reset' | 'respond' | 'forwarded';
    readonly status?: number;
    readonly body?: string;
    readonly by: string;
    readonly ifAllowedBy?: readonly string[];
  };
}

const MESH_CLIENT_ALPN = ['http/1.1'];

/**
 * `x authz explain`: one request through a proxy's config, decided by the data plane's own
 * decision functions (the ones that serve traffic): listener and filter chain, JWT, each RBAC
 * filter in order, route and upstream, and the answer with what decided it.
 */
export async function explainRequest(dump: EnvoyConfigDump, request: ExplainRequest): Promise<Explanation> {
  let decisions: ProxyDecisions;
  try {
    decisions = compileProxyDecisions(proxyResourcesOf(dump));
  } catch (error) {
    throw new MeshError('authz-explain-failed', `the proxy's config cannot be evaluated: ${errorMessage(error)}`, { cause: error });
  }
  const listener = decisions.listenerFor(request.gateway ? 'outbound' : 'inbound', request.address, request.port);
  if (listener === undefined)
    return { connection: `no listener takes connections to ${request.address}:${request.port}`, rbac: [], answer: { outcome: 'reset', by: 'listener' } };
  const facts = factsOf(request, request.source);
  const mtlsMode = probeMode(decisions, listener, request);
  const decision = decisions.connection(listener, facts);
  if (decision.kind === 'reset') {
    const why =
      request.source.kind === 'plaintext' && mtlsMode === 'STRICT'
        ? 'mutual TLS is STRICT on this port: plain text is refused'
        : `no filter chain of ${listener} accepts ${describeSource(request.source)} on port ${request.port}`;
    return { listener, connection: why, ...(mtlsMode ? { mtlsMode } : {}), rbac: [], answer: { outcome: 'reset', by: 'filter chain' } };
  }
  const san = request.source.kind === 'mtls' ? request.source.principal : undefined;
  const verify = decision.downstreamTls?.verifySubjectAltName;
  if (san !== undefined && decision.downstreamTls && verify && !verify(san)) {
    return {
      listener,
      chain: decision.chain,
      connection: `the client certificate's SAN ${san} is not accepted by the chain's validation context: the TLS handshake fails`,
      ...(mtlsMode ? { mtlsMode } : {}),
      rbac: [],
      answer: { outcome: 'reset', by: 'tls' },
    };
  }
  const rbacFilters = rbacFiltersOfChain(dump, listener, decision.chain);
  const asked = newAllowingTransport();
  const http = await decision.http(
    { method: request.method.toUpperCase(), host: request.host, path: request.path, headers: request.headers },
    { connection: facts, now: request.now, random: 0, pick: 0, extAuthz: asked.transport },
  );
  const rbac = rbacSteps(rbacFilters.filters, http.rbac, asked.clusters);
  const providers = rbac.flatMap((step) => (step.externalAuthorizer ? [step.externalAuthorizer.provider] : []));
  const answer = answerOf(http);
  return {
    listener,
    chain: decision.chain,
    connection: describeChain(decision, request.source),
    ...(mtlsMode ? { mtlsMode } : {}),
    jwt: describeJwt(http.jwt, rbacFilters.hasJwt),
    rbac,
    ...routeAndUpstream(http),
    answer: providers.length > 0 ? { ...answer, ifAllowedBy: providers } : answer,
  };
}

/**
 * The external authorizers' stand-in: explain cannot know their answers, so it records which
 * cluster each check would go to and answers as an authorizer that allows, to show what follows.
 */
export function newAllowingTransport(): { transport: ExtAuthzTransport; clusters: string[] } {
  const clusters: string[] = [];
  return {
    clusters,
    transport: {
      http: async (call) => (clusters.push(call.cluster), { kind: 'response', status: 200, headers: {}, body: new Uint8Array() }),
      grpc: async (call) => (clusters.push(call.cluster), { kind: 'response', response: { status: { code: 0 } } }),
    },
  };
}

function factsOf(request: ExplainRequest, source: ExplainSource): ConnectionFacts {
  const base = { destinationAddress: request.address, destinationPort: request.port, sourceAddress: '127.0.0.1', applicationProtocols: MESH_CLIENT_ALPN };
  if (source.kind === 'plaintext') return { ...base, transportProtocol: 'raw_buffer' };
  return { ...base, transportProtocol: 'tls', peerCertificate: { uriSans: [source.principal], dnsSans: [], subject: '', sha256: '' } };
}

/** Which clients the port takes: both (PERMISSIVE), only mutual TLS (STRICT), only plain text (DISABLE). */
function probeMode(decisions: ProxyDecisions, listener: string, request: ExplainRequest): Explanation['mtlsMode'] {
  const takes = (source: ExplainSource): AcceptedChain | undefined => {
    const decision = decisions.connection(listener, factsOf(request, source));
    return decision.kind === 'accept' ? decision : undefined;
  };
  const plain = takes({ kind: 'plaintext' });
  const tls = takes({ kind: 'mtls', principal: 'spiffe://probe/ns/probe/sa/probe' });
  const mutual = tls?.downstreamTls?.requireClientCertificate === true;
  if (plain && mutual) return 'PERMISSIVE';
  if (mutual) return 'STRICT';
  if (plain) return 'DISABLE';
  return undefined;
}

function describeSource(source: ExplainSource): string {
  return source.kind === 'plaintext' ? 'a plain-text connection' : `a mutual TLS connection from ${source.principal}`;
}

function describeChain(chain: AcceptedChain, source: ExplainSource): string {
  const tls = chain.downstreamTls ? (chain.downstreamTls.requireClientCertificate ? 'mutual TLS, client certificate required' : 'TLS') : 'plain text';
  return `${describeSource(source)} taken by filter chain ${chain.chain} (${chain.protocol}, ${tls})`;
}

function describeJwt(verdict: JwtVerdict | undefined, hasJwtFilter: boolean): string {
  if (!hasJwtFilter) return 'no RequestAuthentication applies (no jwt_authn filter)';
  if (verdict === undefined) return 'not reached';
  if (verdict.kind === 'deny') return `${verdict.status} (${verdict.failure}): ${verdict.message}`;
  const payloads = Object.values(verdict.metadata);
  if (payloads.length === 0) return 'no token: passes (a request without a token is allowed; an AuthorizationPolicy may still require one)';
  return payloads
    .map((p) => `valid token: issuer ${String(p.iss)}, subject ${String(p.sub)}${p.exp !== undefined ? `, exp ${new Date(p.exp * 1000).toISOString()}` : ''}`)
    .join('; ');
}

function rbacSteps(filters: readonly RbacFilterSummary[], verdicts: readonly RbacVerdict[], askedClusters: readonly string[]): RbacStep[] {
  let asked = 0;
  return filters.map((filter, index) => {
    const verdict = verdicts[index];
    if (verdict === undefined) return { action: filter.action, policies: filter.policies, result: 'not reached' };
    if (filter.action === 'CUSTOM') {
      // A CUSTOM filter only marks: what it matched is in its shadow result.
      const matchedPolicy = verdict.shadow?.matchedPolicy;
      const base = { action: 'CUSTOM', policies: filter.policies, allowed: true };
      if (matchedPolicy === undefined) return { ...base, result: 'no match' };
      if (filter.dryRun) return { ...base, result: 'no match', dryRun: { allowed: true, matchedPolicy } };
      const cluster = askedClusters[asked++];
      return {
        ...base,
        result: 'matched',
        matchedPolicy,
        externalAuthorizer: { provider: parsePolicyKey(matchedPolicy).provider ?? '', ...(cluster ? { cluster } : {}) },
      };
    }
    const matched = filter.action === 'DENY' ? !verdict.allowed : verdict.matchedPolicy !== undefined;
    return {
      action: filter.action,
      policies: filter.policies,
      result: matched ? 'matched' : 'no match',
      ...(verdict.matchedPolicy !== undefined ? { matchedPolicy: verdict.matchedPolicy } : {}),
      allowed: verdict.allowed,
      ...(verdict.shadow ? { dryRun: verdict.shadow } : {}),
    };
  });
}

function routeAndUpstream(http: HttpDecision): { route?: string; upstream?: string } {
  if (http.kind === 'forward')
    return { route: `cluster ${http.route.cluster} (path ${http.path}, host ${http.host})`, upstream: describeUpstream(http.upstream) };
  if (http.by === 'router' && http.route) return { route: `${http.route.kind}${http.status ? ` ${http.status}` : ''}` };
  return {};
}

function describeUpstream(upstream: UpstreamDecision): string {
  switch (upstream.kind) {
    case 'endpoint':
      return `${upstream.address}:${upstream.port} of ${upstream.cluster}${upstream.tls.kind === 'tls' ? ' (TLS)' : ''}`;
    case 'original-destination':
      return `the original destination (${upstream.cluster})`;
    case 'no-healthy-upstream':
      return `no healthy endpoint in ${upstream.cluster}: 503`;
    default:
      return `unknown cluster ${upstream.cluster}: 503`;
  }
}

function answerOf(http: HttpDecision): Explanation['answer'] {
  if (http.kind === 'respond') {
    const deciding = http.by === 'rbac' ? http.rbac.find((v) => !v.allowed)?.matchedPolicy : undefined;
    return { outcome: 'respond', status: http.status, body: http.body, by: deciding !== undefined ? `rbac ${deciding}` : http.by };
  }
  if (http.upstream.kind === 'no-healthy-upstream' || http.upstream.kind === 'unknown-cluster')
    return { outcome: 'respond', status: 503, body: 'no healthy upstream', by: 'upstream' };
  return { outcome: 'forwarded', by: 'router' };
}
