import { createLocalJWKSet, errors, jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { HttpRequestFacts } from './facts.js';
import { compileRouteMatch, type RouteMatchConfig } from './route-match.js';
import type { JwtFailure } from './jwt-failure.js';
import type { RecordedToken, RecordedTokenVerifier } from './recorded-request.js';
import { timeoutMs as timeoutMsOf, type DurationConfig } from './duration.js';

/** `envoy.extensions.filters.http.jwt_authn.v3.JwtProvider` (the fields the data plane implements). */
export interface JwtProviderConfig {
  issuer?: string;
  audiences?: string[];
  local_jwks?: { inline_string?: string };
  remote_jwks?: RemoteJwksConfig;
  from_headers?: { name: string; value_prefix?: string }[];
  from_params?: string[];
  from_cookies?: string[];
  forward?: boolean;
  forward_payload_header?: string;
  payload_in_metadata?: string;
  claim_to_headers?: { header_name: string; claim_name: string }[];
  clock_skew_seconds?: number;
  normalize_payload_in_metadata?: { space_delimited_claims?: string[] };
}

/** `envoy.extensions.filters.http.jwt_authn.v3.RemoteJwks`: the key set fetched from a cluster and kept `cache_duration`. */
export interface RemoteJwksConfig {
  http_uri?: { uri?: string; cluster?: string; timeout?: DurationConfig };
  cache_duration?: DurationConfig;
}

/** A remote key set's fetch: the text of `uri` from an endpoint of `cluster`; rejects when there is none. */
export type JwksFetcher = (call: { readonly cluster: string; readonly uri: string; readonly timeoutMs: number }) => Promise<string>;

/** What verifying a token needs besides the request: the time, and the fetch of remote key sets. */
interface JwtEnv {
  readonly now: Date;
  readonly fetchJwks?: JwksFetcher;
  /** Replays only: the traffic record's stand-in tokens, checked by their recorded claims. */
  readonly recorded?: RecordedTokenVerifier;
}

/** What a jwt_authn filter may be given besides the request and the time. */
export interface JwtExtras {
  readonly fetchJwks?: JwksFetcher;
  readonly recorded?: RecordedTokenVerifier;
}

export type JwtRequirementConfig =
  | { provider_name: string }
  | { provider_and_audiences: { provider_name: string; audiences: string[] } }
  | { requires_any: { requirements: JwtRequirementConfig[] } }
  | { requires_all: { requirements: JwtRequirementConfig[] } }
  | { allow_missing: object }
  | { allow_missing_or_failed: object };

/** `envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication`. */
export interface JwtAuthenticationConfig {
  providers?: Record<string, JwtProviderConfig>;
  rules?: { match: RouteMatchConfig; requires?: JwtRequirementConfig }[];
  bypass_cors_preflight?: boolean;
}

export type { JwtFailure } from './jwt-failure.js';

export type JwtVerdict =
  | {
      readonly kind: 'allow';
      /** `payload_in_metadata` → verified payload, for the RBAC filter's metadata matchers. */
      readonly metadata: Readonly<Record<string, JWTPayload>>;
      readonly headersToSet: Readonly<Record<string, string>>;
      readonly headersToRemove: readonly string[];
    }
  | { readonly kind: 'deny'; readonly status: 401 | 403; readonly failure: JwtFailure; readonly message: string };

const DEFAULT_SKEW_SECONDS = 60;

interface Token {
  readonly value: string;
  /** The header the token came from (removed unless `forward`). */
  readonly header?: string;
}

type Outcome = { ok: true; provider?: CompiledProvider; payload?: JWTPayload; token?: Token } | { ok: false; failure: JwtFailure };

interface CompiledProvider {
  readonly name: string;
  readonly config: JwtProviderConfig;
  /** The key set: inline, or fetched and cached; undefined when a remote fetch failed. */
  keysFor(env: JwtEnv): Promise<JWTVerifyGetKey | undefined>;
  /**
   * Tokens whose signature, issuer and audience were verified, by the whole token and the audiences
   * asked (Envoy's jwt_cache): a token differing in any byte misses. A hit is checked against the
   * clock again (exp, nbf) and dropped once it fails; at most JWT_CACHE_SIZE, least recently used out.
   */
  readonly verified: Map<string, JWTPayload>;
  extract(request: HttpRequestFacts): Token[];
}

/** Envoy's default `jwt_cache_config.jwt_cache_size`. */
const JWT_CACHE_SIZE = 100;

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function compileProvider(name: string, config: JwtProviderConfig): CompiledProvider {
  const inline = config.local_jwks?.inline_string;
  let keysFor: CompiledProvider['keysFor'];
  if (inline !== undefined) {
    const keys = createLocalJWKSet(JSON.parse(inline) as Parameters<typeof createLocalJWKSet>[0]);
    keysFor = async () => keys;
  } else if (config.remote_jwks) {
    keysFor = compileRemoteJwks(name, config.remote_jwks);
  } else {
    throw new Error(`providers["${name}"]: needs local_jwks.inline_string or remote_jwks`);
  }
  const useDefaults = (config.from_headers ?? []).length === 0 && (config.from_params ?? []).length === 0 && (config.from_cookies ?? []).length === 0;
  const headers = useDefaults ? [{ name: 'authorization', value_prefix: 'Bearer ' }] : (config.from_headers ?? []);
  const params = useDefaults ? ['access_token'] : (config.from_params ?? []);
  const cookies = config.from_cookies ?? [];
  return {
    name,
    config,
    keysFor,
    verified: new Map(),
    extract(request) {
      const tokens: Token[] = [];
      for (const { name: headerName, value_prefix: prefix = '' } of headers) {
        const lower = headerName.toLowerCase();
        const value = request.headers[lower];
        if (value === undefined) continue;
        const at = prefix === '' ? 0 : value.indexOf(prefix);
        if (at < 0) continue;
        const token = tokenAfterPrefix(value.slice(at + prefix.length));
        if (token !== '') tokens.push({ value: token, header: lower });
      }
      const query = request.path.indexOf('?');
      if (query >= 0 && params.length > 0) {
        const search = new URLSearchParams(request.path.slice(query + 1));
        for (const param of params) {
          const value = search.get(param);
          if (value) tokens.push({ value });
        }
      }
      for (const cookie of cookies) {
        const value = cookieValue(request.headers['cookie'], cookie);
        if (value) tokens.push({ value });
      }
      return tokens;
    },
  };
}

/** Envoy's `RemoteJwks.cache_duration` default. */
const DEFAULT_JWKS_CACHE_MS = 600_000;
const DEFAULT_JWKS_TIMEOUT_MS = 1000;

/**
 * A remote key set, as Envoy's jwks cache keeps it: fetched on the first token that needs it, kept
 * `cache_duration`, fetched once for requests that wait for it together; a failed fetch is not
 * kept, so the next token tries again (and its request is refused meanwhile).
 */
function compileRemoteJwks(name: string, config: RemoteJwksConfig): CompiledProvider['keysFor'] {
  const uri = config.http_uri?.uri;
  const cluster = config.http_uri?.cluster;
  if (!uri || !cluster) throw new Error(`providers["${name}"].remote_jwks.http_uri: needs uri and cluster`);
  const timeoutMs = config.http_uri?.timeout === undefined ? DEFAULT_JWKS_TIMEOUT_MS : timeoutMsOf(config.http_uri.timeout);
  const cacheMs = config.cache_duration === undefined ? DEFAULT_JWKS_CACHE_MS : timeoutMsOf(config.cache_duration);
  let cached: { keys: JWTVerifyGetKey; until: number } | undefined;
  let pending: Promise<JWTVerifyGetKey> | undefined;
  return async (env) => {
    const at = env.now.getTime();
    if (cached && at < cached.until) return cached.keys;
    if (!env.fetchJwks) return undefined;
    const fetch = env.fetchJwks;
    pending ??= (async () => createLocalJWKSet(JSON.parse(await fetch({ cluster, uri, timeoutMs })) as Parameters<typeof createLocalJWKSet>[0]))().finally(
      () => (pending = undefined),
    );
    try {
      const keys = await pending;
      cached = { keys, until: at + cacheMs };
      return keys;
    } catch {
      return undefined;
    }
  };
}

/**
 * Envoy's extraction of a token from a header value after its prefix: the first run of base64url
 * characters and dots (so `,<token>` still yields the token, and junk such as `,..` is a token that
 * fails verification rather than a missing one); without any such character, the value itself
 * (a token too, that fails). Only an empty value is no token.
 */
function tokenAfterPrefix(rest: string): string {
  const run = /[A-Za-z0-9_\-.]+/.exec(rest);
  return run ? run[0] : rest;
}

function failureOf(error: unknown): JwtFailure {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'not-yet-valid';
    if (error.claim === 'aud') return 'audience-not-allowed';
    if (error.claim === 'iss') return 'unknown-issuer';
    return 'verification-failed';
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return 'malformed';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no-matching-key';
  return 'verification-failed';
}

/** The time checks a cached token still needs: its signature and claims were verified, but time moves on. */
function timeFailure(payload: JWTPayload, now: Date, skewSeconds: number): JwtFailure | undefined {
  const seconds = now.getTime() / 1000;
  if (typeof payload.exp === 'number' && seconds - skewSeconds >= payload.exp) return 'expired';
  if (typeof payload.nbf === 'number' && seconds + skewSeconds < payload.nbf) return 'not-yet-valid';
  return undefined;
}

async function verify(provider: CompiledProvider, token: Token, env: JwtEnv, audiences?: string[]): Promise<Outcome> {
  const { now } = env;
  const wanted = audiences ?? provider.config.audiences ?? [];
  const skew = provider.config.clock_skew_seconds ?? DEFAULT_SKEW_SECONDS;
  const stoodFor = env.recorded?.(token.value);
  if (stoodFor) return verifyRecorded(provider, token, stoodFor, { wanted, skew, now });
  const cacheKey = `${wanted.join(',')}\0${token.value}`;
  const cached = provider.verified.get(cacheKey);
  if (cached) {
    const failure = timeFailure(cached, now, skew);
    provider.verified.delete(cacheKey);
    if (failure) return { ok: false, failure };
    // Least recently used first out: a hit goes to the end of the map's order.
    provider.verified.set(cacheKey, cached);
    return { ok: true, provider, payload: cached, token };
  }
  const options = {
    ...(provider.config.issuer ? { issuer: provider.config.issuer } : {}),
    ...(wanted.length > 0 ? { audience: wanted } : {}),
    clockTolerance: skew,
    currentDate: now,
  };
  const keys = await provider.keysFor(env);
  if (!keys) return { ok: false, failure: 'jwks-fetch-failed' };
  try {
    const { payload } = await verifyWithAnyKey(token.value, keys, options);
    if (provider.verified.size >= JWT_CACHE_SIZE) provider.verified.delete(provider.verified.keys().next().value as string);
    provider.verified.set(cacheKey, payload);
    return { ok: true, provider, payload, token };
  } catch (error) {
    return { ok: false, failure: failureOf(error) };
  }
}

/**
 * A replayed token: its recorded claims checked as the signature check would check them (issuer,
 * audiences, time); a recorded signature or key failure stays one. Key rotation is not replayed.
 */
function verifyRecorded(
  provider: CompiledProvider,
  token: Token,
  recorded: RecordedToken,
  check: { wanted: readonly string[]; skew: number; now: Date },
): Outcome {
  if (recorded.failure) return { ok: false, failure: recorded.failure };
  const { claims } = recorded;
  if (provider.config.issuer && claims.iss !== provider.config.issuer) return { ok: false, failure: 'unknown-issuer' };
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
  if (check.wanted.length > 0 && !audiences.some((audience) => check.wanted.includes(audience))) return { ok: false, failure: 'audience-not-allowed' };
  const failure = timeFailure(claims, check.now, check.skew);
  if (failure) return { ok: false, failure };
  return { ok: true, provider, payload: { ...claims }, token };
}

/**
 * Verifies with the key the token's `kid` names or, without one, with each key of the set whose
 * algorithm fits until one verifies (as Envoy: a key set may hold several keys for one algorithm).
 */
async function verifyWithAnyKey(token: string, keys: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<{ payload: JWTPayload }> {
  try {
    return await jwtVerify(token, keys, options);
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error as errors.JWKSMultipleMatchingKeys & AsyncIterable<CryptoKey>) {
      try {
        return await jwtVerify(token, key, options);
      } catch (attempt) {
        if (!(attempt instanceof errors.JWSSignatureVerificationFailed)) throw attempt;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/** Envoy reports the most telling failure of a group: anything beats "missing". */
function worst(outcomes: Outcome[]): Outcome {
  const failures = outcomes.filter((o): o is { ok: false; failure: JwtFailure } => !o.ok);
  return failures.find((f) => f.failure !== 'missing') ?? failures[0] ?? { ok: false, failure: 'missing' };
}

type CompiledRequirement = (request: HttpRequestFacts, env: JwtEnv) => Promise<Outcome>;

function compileRequirement(config: JwtRequirementConfig, providers: ReadonlyMap<string, CompiledProvider>): CompiledRequirement {
  const providerNamed = (name: string): CompiledProvider => {
    const provider = providers.get(name);
    if (!provider) throw new Error(`requirement names unknown provider "${name}"`);
    return provider;
  };
  // Every token the provider finds must verify: a request carrying a good token and a bad one is
  // refused, so that no backend reads the bad one as if it had been checked.
  const one =
    (provider: CompiledProvider, audiences?: string[]): CompiledRequirement =>
    async (request, env) => {
      const tokens = provider.extract(request);
      if (tokens.length === 0) return { ok: false, failure: 'missing' };
      let first: Outcome | undefined;
      for (const token of tokens) {
        const outcome = await verify(provider, token, env, audiences);
        if (!outcome.ok) return outcome;
        first ??= outcome;
      }
      return first as Outcome;
    };
  if ('provider_name' in config) return one(providerNamed(config.provider_name));
  if ('provider_and_audiences' in config) {
    return one(providerNamed(config.provider_and_audiences.provider_name), config.provider_and_audiences.audiences);
  }
  if ('requires_any' in config) {
    const children = config.requires_any.requirements.map((child) => compileRequirement(child, providers));
    return async (request, env) => {
      const outcomes: Outcome[] = [];
      for (const child of children) {
        const outcome = await child(request, env);
        if (outcome.ok) return outcome;
        outcomes.push(outcome);
      }
      return worst(outcomes);
    };
  }
  if ('requires_all' in config) {
    const children = config.requires_all.requirements.map((child) => compileRequirement(child, providers));
    return async (request, env) => {
      let last: Outcome = { ok: true };
      for (const child of children) {
        last = await child(request, env);
        if (!last.ok) return last;
      }
      return last;
    };
  }
  const allowFailed = 'allow_missing_or_failed' in config;
  if (!allowFailed && !('allow_missing' in config)) throw new Error(`unsupported requirement ${JSON.stringify(Object.keys(config))}`);
  // Every token any provider finds is tried against the providers that found it; each must be
  // accepted by one of them, unless failures are allowed.
  return async (request, env) => {
    const finders = new Map<string, { token: Token; providers: CompiledProvider[] }>();
    for (const provider of providers.values()) {
      for (const token of provider.extract(request)) {
        const entry = finders.get(token.value) ?? { token, providers: [] };
        entry.providers.push(provider);
        finders.set(token.value, entry);
      }
    }
    let accepted: Outcome | undefined;
    const failures: Outcome[] = [];
    for (const { token, providers: candidates } of finders.values()) {
      const outcomes: Outcome[] = [];
      for (const provider of candidates) {
        const outcome = await verify(provider, token, env);
        outcomes.push(outcome);
        if (outcome.ok) break;
      }
      const ok = outcomes.find((outcome) => outcome.ok);
      if (ok) accepted ??= ok;
      else failures.push(worst(outcomes));
    }
    if (failures.length > 0 && !allowFailed) return worst(failures);
    return accepted ?? { ok: true };
  };
}

const MESSAGES: Readonly<Record<JwtFailure, string>> = {
  missing: 'Jwt is missing',
  expired: 'Jwt is expired',
  'not-yet-valid': 'Jwt not yet valid',
  'audience-not-allowed': 'Audiences in Jwt are not allowed',
  'unknown-issuer': 'Jwt issuer is not configured',
  'no-matching-key': "Jwks doesn't have key to match kid or alg from Jwt",
  'verification-failed': 'Jwt verification fails',
  malformed: 'Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections',
  'jwks-fetch-failed': 'Jwks remote fetch is failed',
};

function isCorsPreflight(request: HttpRequestFacts): boolean {
  return request.method === 'OPTIONS' && request.headers['origin'] !== undefined && request.headers['access-control-request-method'] !== undefined;
}

/**
 * The payload as the metadata carries it: each space-delimited claim that is a string becomes the
 * list of its words (empty ones skipped), as Envoy's `normalize_payload_in_metadata` does, so
 * that a rule on `scope` matches one scope of `"read admin"`. Headers still get the claim as sent.
 */
function normalizedPayload(payload: JWTPayload, spaceDelimited: readonly string[]): JWTPayload {
  const split = spaceDelimited.filter((claim) => typeof payload[claim] === 'string');
  if (split.length === 0) return payload;
  const out: JWTPayload = { ...payload };
  for (const claim of split) out[claim] = (payload[claim] as string).split(' ').filter((word) => word !== '');
  return out;
}

function claimText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * Compiles a jwt_authn filter: the first rule whose match fits the request names the
 * requirement; no rule, no requirement. The verdict carries the verified payload for RBAC and the
 * header edits (`forward: false` removes the token header, `claim_to_headers`, `forward_payload_header`).
 */
export function compileJwtAuthn(config: JwtAuthenticationConfig): (request: HttpRequestFacts, now: Date, extras?: JwtExtras) => Promise<JwtVerdict> {
  const providers = new Map(Object.entries(config.providers ?? {}).map(([name, provider]) => [name, compileProvider(name, provider)]));
  const rules = (config.rules ?? []).map((rule) => ({
    matches: compileRouteMatch(rule.match),
    requires: rule.requires ? compileRequirement(rule.requires, providers) : undefined,
  }));
  const bypassCors = config.bypass_cors_preflight === true;
  return async (request, now, extras = {}) => {
    const allowNothingVerified: JwtVerdict = { kind: 'allow', metadata: {}, headersToSet: {}, headersToRemove: [] };
    if (bypassCors && isCorsPreflight(request)) return allowNothingVerified;
    const requires = rules.find((rule) => rule.matches(request))?.requires;
    if (!requires) return allowNothingVerified;
    const outcome = await requires(request, { ...extras, now });
    if (!outcome.ok) {
      return { kind: 'deny', status: outcome.failure === 'audience-not-allowed' ? 403 : 401, failure: outcome.failure, message: MESSAGES[outcome.failure] };
    }
    const { provider, payload, token } = outcome;
    if (!provider || !payload || !token) return allowNothingVerified;
    const headersToSet: Record<string, string> = {};
    for (const { header_name: header, claim_name: claim } of provider.config.claim_to_headers ?? []) {
      const text = claimText(payload[claim]);
      if (text !== undefined) headersToSet[header.toLowerCase()] = text;
    }
    if (provider.config.forward_payload_header) {
      headersToSet[provider.config.forward_payload_header.toLowerCase()] = Buffer.from(JSON.stringify(payload)).toString('base64url');
    }
    const key = provider.config.payload_in_metadata;
    return {
      kind: 'allow',
      metadata: key ? { [key]: normalizedPayload(payload, provider.config.normalize_payload_in_metadata?.space_delimited_claims ?? []) } : {},
      headersToSet,
      headersToRemove: provider.config.forward !== true && token.header ? [token.header] : [],
    };
  };
}
