import { decodeJwt, type JWTPayload } from 'jose';
import type { ConnectionFacts, HttpDecision, HttpRequestFacts, JwtFailure, PolicyReadable, RecordedRequest, RecordedToken } from './decisions/index.js';
import { NEVER_KEPT_HEADERS, verdictOf } from './decisions/index.js';

/** Claims kept of every token: who issued it, for whom, about whom, and when it holds. */
const ALWAYS_KEPT_CLAIMS = ['iss', 'sub', 'aud', 'azp', 'exp', 'nbf', 'iat'];
/** A claim bigger than this (as JSON) is left out rather than kept. */
const MAX_CLAIM_CHARS = 1024;
/** Failures that no claim explains: a replay keeps them as they were. */
const SIGNATURE_FAILURES: ReadonlySet<JwtFailure> = new Set(['no-matching-key', 'verification-failed', 'malformed']);
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const TOKEN_RUN = /[A-Za-z0-9_\-.]+/;

export interface RecordedRequestInput {
  readonly listener: string;
  readonly direction: 'inbound' | 'outbound' | 'gateway';
  readonly connection: ConnectionFacts;
  readonly request: HttpRequestFacts;
  readonly decision: HttpDecision;
  readonly readable: PolicyReadable;
  /** A token's payload, decoded (not verified); `decodedClaims` without a cache. */
  readonly claimsOf?: (token: string) => JWTPayload | undefined;
}

/**
 * What the traffic record keeps of a request: the facts the decisions read, only the headers and
 * claims some policy names, each token by its claims (never the token), and the verdict.
 */
export function recordedRequestOf(input: RecordedRequestInput): RecordedRequest {
  const { connection: c, request: r, readable } = input;
  const headers: Record<string, string> = {};
  for (const name of readable.headers) {
    const value = r.headers[name];
    if (value !== undefined && !readable.tokenHeaders.has(name) && !NEVER_KEPT_HEADERS.has(name)) headers[name] = value;
  }
  const query = pathWithoutTokens(r.path, readable.tokenParams);
  const seen: TokenContext = { decision: input.decision, readable, claimsOf: input.claimsOf ?? decodedClaims };
  const tokens = [...tokensOf(r, seen), ...query.tokens.map(({ param, value }) => recordedToken({ param }, value, seen))];
  return {
    listener: input.listener,
    direction: input.direction,
    connection: {
      destinationAddress: c.destinationAddress,
      destinationPort: c.destinationPort,
      sourceAddress: c.sourceAddress,
      transportProtocol: c.transportProtocol,
      ...(c.serverName ? { serverName: c.serverName } : {}),
      ...(c.applicationProtocols ? { applicationProtocols: c.applicationProtocols } : {}),
      ...(c.peerCertificate?.uriSans.length ? { peerUriSans: c.peerCertificate.uriSans } : {}),
      ...(c.peerCertificate?.dnsSans.length ? { peerDnsSans: c.peerCertificate.dnsSans } : {}),
    },
    request: { method: r.method, host: r.host, path: query.path, ...(r.protocol ? { protocol: r.protocol } : {}), headers },
    ...(tokens.length > 0 ? { tokens } : {}),
    verdict: verdictOf(input.decision),
  };
}

/** What recording a request's tokens reads: the decision, what policies read, and the payload decoder. */
interface TokenContext {
  readonly decision: HttpDecision;
  readonly readable: PolicyReadable;
  readonly claimsOf: (token: string) => JWTPayload | undefined;
}

function tokensOf(request: HttpRequestFacts, seen: TokenContext): RecordedToken[] {
  const tokens: RecordedToken[] = [];
  for (const [header, prefixes] of seen.readable.tokenHeaders) {
    const value = request.headers[header];
    if (value === undefined) continue;
    for (const prefix of prefixes) {
      const at = prefix === '' ? 0 : value.indexOf(prefix);
      if (at < 0) continue;
      const rest = value.slice(at + prefix.length);
      // As the data plane extracts it: the first run of base64url characters and dots, else the rest.
      const token = TOKEN_RUN.exec(rest)?.[0] ?? rest;
      if (token === '') continue;
      tokens.push(recordedToken({ header, prefix: value.slice(0, at + prefix.length) }, token, seen));
      break;
    }
  }
  return tokens;
}

/** A token by its claims, with why the data plane refused it when no claim explains it, and whether it checked its signature. */
function recordedToken(where: Pick<RecordedToken, 'header' | 'prefix' | 'param'>, token: string, seen: TokenContext): RecordedToken {
  const jwt = seen.decision.jwt;
  const shaped = JWT_SHAPE.test(token);
  const failure = !shaped ? 'malformed' : jwt?.kind === 'deny' && SIGNATURE_FAILURES.has(jwt.failure) ? jwt.failure : undefined;
  const verified = jwt?.kind === 'allow' && Object.keys(jwt.metadata).length > 0;
  return {
    ...where,
    claims: shaped ? keptClaims(seen.claimsOf(token), seen.readable.claims) : {},
    ...(failure ? { failure } : {}),
    ...(verified ? { verified: true } : {}),
  };
}

/** The path without the query parameters tokens are taken from, and those tokens. */
function pathWithoutTokens(path: string, params: ReadonlySet<string>): { path: string; tokens: { param: string; value: string }[] } {
  const query = path.indexOf('?');
  if (query < 0) return { path, tokens: [] };
  const search = new URLSearchParams(path.slice(query + 1));
  const tokens: { param: string; value: string }[] = [];
  for (const param of params) {
    const value = search.get(param);
    if (value === null) continue;
    search.delete(param);
    if (value !== '') tokens.push({ param, value });
  }
  if (tokens.length === 0) return { path, tokens };
  const rest = search.toString();
  return { path: rest === '' ? path.slice(0, query) : `${path.slice(0, query)}?${rest}`, tokens };
}

/** A token's payload as it reads, without checking anything; undefined when it does not decode. */
export function decodedClaims(token: string): JWTPayload | undefined {
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

/** `decodedClaims` remembering the last `size` tokens: a client sends the same token many times. */
export function newClaimsCache(size = 256): (token: string) => JWTPayload | undefined {
  const cache = new Map<string, JWTPayload | undefined>();
  return (token) => {
    if (cache.has(token)) return cache.get(token);
    const claims = decodedClaims(token);
    if (cache.size >= size) cache.delete(cache.keys().next().value as string);
    cache.set(token, claims);
    return claims;
  };
}

function keptClaims(payload: JWTPayload | undefined, named: ReadonlySet<string>): JWTPayload {
  if (!payload) return {};
  const kept: Record<string, unknown> = {};
  for (const [claim, value] of Object.entries(payload)) {
    if (!ALWAYS_KEPT_CLAIMS.includes(claim) && !named.has(claim)) continue;
    if (JSON.stringify(value).length <= MAX_CLAIM_CHARS) kept[claim] = value;
  }
  return kept;
}
