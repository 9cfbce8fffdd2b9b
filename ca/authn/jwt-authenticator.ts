import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../../controllers/runtime/index.js';
import { CaError } from '../ca-error.js';
import type { Authenticator } from './authenticator.js';
import { parseServiceAccountUser, spiffeId } from '../trust/spiffe.js';

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
  /** Injected for tests; global fetch otherwise. Used for discovery only (jose fetches the key set). */
  readonly fetch?: typeof fetch;
}

const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * Tokens of an OIDC issuer, verified with jose against the issuer's key set. The key set is
 * fetched once and cached (refetched by jose when a token names an unknown key).
 */
export function newJwtAuthenticator(options: JwtAuthenticatorOptions): Authenticator {
  const { rule, trustDomain } = options;
  const fetchFn = options.fetch ?? fetch;
  let keySet: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  const resolveKeySet = (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    keySet ??= (async () => {
      const uri = rule.jwksUri ?? (await discoverJwksUri(rule.issuer, fetchFn));
      return createRemoteJWKSet(new URL(uri));
    })();
    // A failed discovery is retried by the next request.
    keySet.catch(() => (keySet = undefined));
    return keySet;
  };

  return {
    name: 'oidc-jwt',
    authenticate: async ({ bearerToken }) => {
      if (!bearerToken) return undefined;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(bearerToken, await resolveKeySet(), {
          issuer: rule.issuer,
          audience: [...rule.audiences],
          algorithms: ASYMMETRIC_ALGORITHMS,
          ...(options.clock ? { currentDate: new Date(options.clock.now()) } : {}),
        }));
      } catch (err) {
        throw new CaError('unauthenticated', `JWT verification failed: ${(err as Error).message}`, { cause: err });
      }
      const account = serviceAccountOf(payload);
      if (!account) throw new CaError('unauthenticated', 'the JWT does not name a service account');
      return { identities: [spiffeId({ trustDomain, ...account })], authenticator: 'oidc-jwt' };
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
