import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { Authenticator, Caller } from './authenticator.js';
import { parseServiceAccountUser, spiffeId } from '../trust/spiffe.js';
import { newVerifiedTokenCache } from './verified-token-cache.js';
import { errorMessage } from '../../runtime/index.js';

/** Which tokens an OIDC issuer vouches for. */
export interface JwtRule {
  readonly issuer: string;
  /** Accepted `aud` values; a token must carry at least one. */
  readonly audiences: readonly string[];
  /** The key set; discovered from `<issuer>/.well-known/openid-configuration` when absent. */
  readonly jwksUri?: string;
}

/** JWT_RULE: `{"issuer": "...", "audiences": ["..."], "jwks_uri": "..."}`. */
export function parseJwtRule(text: string): JwtRule {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CaError('ca-material-invalid', 'JWT_RULE is not JSON', { cause: err });
  }
  const rule = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const issuer = rule['issuer'];
  const audiences = rule['audiences'];
  const jwksUri = rule['jwks_uri'] ?? rule['jwksUri'];
  if (typeof issuer !== 'string' || issuer === '') throw new CaError('ca-material-invalid', 'JWT_RULE needs an issuer');
  if (!Array.isArray(audiences) || audiences.length === 0 || !audiences.every((a) => typeof a === 'string' && a !== '')) {
    throw new CaError('ca-material-invalid', 'JWT_RULE needs a non-empty list of audiences');
  }
  if (jwksUri !== undefined && typeof jwksUri !== 'string') throw new CaError('ca-material-invalid', 'JWT_RULE jwks_uri must be a string');
  return { issuer, audiences: audiences as string[], ...(jwksUri ? { jwksUri } : {}) };
}

export interface JwtAuthenticatorOptions {
  readonly rule: JwtRule;
  readonly trustDomain: string;
  /** For token expiry; the real time when absent. */
  readonly clock?: Clock;
  /** Injected for tests; global fetch otherwise. Used for discovery and for the key set. */
  readonly fetch?: typeof fetch;
  /** Tokens whose verdict is kept (`verified-token-cache.ts`); default 4096, 0 turns the cache off. */
  readonly tokenCacheSize?: number;
  /** How long the fetched key set is used before it is fetched again; jose's default, 10 minutes. */
  readonly keySetMaxAgeMs?: number;
  /** The least time between two fetches caused by a token naming an unknown key; jose's default, 30 s. */
  readonly keySetCooldownMs?: number;
}

const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * Tokens of an OIDC issuer, verified with jose against the issuer's key set. The key set is
 * fetched once and cached (refetched by jose when a token names an unknown key, and once it is
 * older than `keySetMaxAgeMs`). A token that verified is remembered until its `exp`, bounded by
 * the key set's own cache (`verified-token-cache.ts` states the rule), so an agent presenting
 * the same token again costs no signature check.
 */
export function newJwtAuthenticator(options: JwtAuthenticatorOptions): Authenticator {
  const { rule, trustDomain } = options;
  const fetchFn = options.fetch ?? fetch;
  const now = (): number => options.clock?.now() ?? Date.now();
  let keySet: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  let remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  // Counts key-set fetches when they start: every verdict of an older set dies with it.
  let keySetGeneration = 0;
  const fetchKeySet = (url: string, init: RequestInit): Promise<Response> => {
    keySetGeneration++;
    return fetchFn(url, init);
  };
  const verdicts = newVerifiedTokenCache({
    maxEntries: options.tokenCacheSize ?? 4096,
    keySetGeneration: () => keySetGeneration,
    isKeySetFresh: () => remote?.fresh === true,
  });

  const resolveKeySet = (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    keySet ??= (async () => {
      const uri = rule.jwksUri ?? (await discoverJwksUri(rule.issuer, fetchFn));
      remote = createRemoteJWKSet(new URL(uri), {
        [customFetch]: fetchKeySet,
        ...(options.keySetMaxAgeMs === undefined ? {} : { cacheMaxAge: options.keySetMaxAgeMs }),
        ...(options.keySetCooldownMs === undefined ? {} : { cooldownDuration: options.keySetCooldownMs }),
      });
      return remote;
    })();
    // A failed discovery is retried by the next request.
    keySet.catch(() => (keySet = undefined));
    return keySet;
  };

  return {
    name: 'oidc-jwt',
    authenticate: async ({ bearerToken }) => {
      if (!bearerToken) return undefined;
      const cached = verdicts.get(bearerToken, now());
      if (cached) return cached;
      const generation = keySetGeneration;
      const reloadingBefore = remote?.reloading === true;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(bearerToken, await resolveKeySet(), {
          issuer: rule.issuer,
          audience: [...rule.audiences],
          algorithms: ASYMMETRIC_ALGORITHMS,
          ...(options.clock ? { currentDate: new Date(options.clock.now()) } : {}),
        }));
      } catch (err) {
        throw new CaError('unauthenticated', `JWT verification failed: ${errorMessage(err)}`, { cause: err });
      }
      const account = serviceAccountOf(payload);
      if (!account) throw new CaError('unauthenticated', 'the JWT does not name a service account');
      const caller: Caller = Object.freeze({ identities: Object.freeze([spiffeId({ trustDomain, ...account })]), authenticator: 'oidc-jwt' });
      // Kept only when one key set, not being replaced, verified it; a token without `exp` is never kept.
      if (typeof payload.exp === 'number' && !reloadingBefore && remote?.reloading !== true && generation === keySetGeneration) {
        verdicts.set(bearerToken, caller, payload.exp * 1000, generation);
      }
      return caller;
    },
  };
}

/** The service account of a token: its `kubernetes.io` claims, else a `system:serviceaccount:` subject. */
function serviceAccountOf(payload: JWTPayload): { namespace: string; serviceAccount: string } | undefined {
  const kube = payload['kubernetes.io'];
  if (typeof kube === 'object' && kube !== null) {
    const k = kube as { namespace?: unknown; serviceaccount?: { name?: unknown } };
    if (typeof k.namespace === 'string' && typeof k.serviceaccount?.name === 'string') {
      return parseServiceAccountUser(`system:serviceaccount:${k.namespace}:${k.serviceaccount.name}`);
    }
  }
  return typeof payload.sub === 'string' ? parseServiceAccountUser(payload.sub) : undefined;
}

async function discoverJwksUri(issuer: string, fetchFn: typeof fetch): Promise<string> {
  const response = await fetchFn(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new CaError('unauthenticated', `OIDC discovery for ${issuer} answered ${response.status}`);
  const body = (await response.json()) as { jwks_uri?: unknown };
  if (typeof body.jwks_uri !== 'string') throw new CaError('unauthenticated', `OIDC discovery for ${issuer} has no jwks_uri`);
  return body.jwks_uri;
}
