import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { errors as joseErrors, importJWK, jwtVerify } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { Clock } from '../runtime/index.js';
import { isPlainObject } from './object-util.js';

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface IssueTokenOptions {
  namespace: string;
  serviceAccount: string;
  audiences?: string[];
  expirationSeconds?: number;
  podName?: string;
  podUid?: string;
  serviceAccountUid?: string;
}

export interface TokenReviewStatus {
  authenticated: boolean;
  user?: { username: string; uid: string; groups: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

interface ServiceAccountClaims {
  namespace?: string;
  serviceaccount?: { name?: string; uid?: string };
  pod?: { name?: string; uid?: string };
}

/**
 * Issues and reviews bound service account tokens: ES256 JWTs with the claims the real API
 * server puts in them (iss, sub, aud, exp, iat, nbf, jti and the `kubernetes.io` block).
 */
export class TokenAuthority {
  private constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: CryptoKey,
    private readonly publicJwk: JWK,
    private readonly clock: Clock,
    readonly issuer: string,
    readonly defaultAudiences: string[],
  ) {}

  static async create(clock: Clock, issuer = DEFAULT_ISSUER): Promise<TokenAuthority> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const exported = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = createHash('sha256')
      .update(JSON.stringify([exported.crv, exported.x, exported.y]))
      .digest('base64url');
    const publicJwk: JWK = { ...exported, kid, alg: 'ES256', use: 'sig' };
    const verifyKey = (await importJWK(publicJwk, 'ES256')) as CryptoKey;
    return new TokenAuthority(privateKey, verifyKey, publicJwk, clock, issuer, [issuer]);
  }

  /** A signed token; synchronous so tests can build one inline. */
  issue(opts: IssueTokenOptions): string {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const expiration = opts.expirationSeconds ?? 3600;
    const claims: ServiceAccountClaims = {
      namespace: opts.namespace,
      serviceaccount: { name: opts.serviceAccount, uid: opts.serviceAccountUid ?? stableUid(`${opts.namespace}/${opts.serviceAccount}`) },
      ...(opts.podName ? { pod: { name: opts.podName, uid: opts.podUid ?? stableUid(`${opts.namespace}/pod/${opts.podName}`) } } : {}),
    };
    const payload = {
      aud: opts.audiences && opts.audiences.length > 0 ? opts.audiences : this.defaultAudiences,
      exp: nowSeconds + expiration,
      iat: nowSeconds,
      nbf: nowSeconds,
      iss: this.issuer,
      jti: randomUUID(),
      'kubernetes.io': claims,
      sub: `system:serviceaccount:${opts.namespace}:${opts.serviceAccount}`,
    };
    const header = { alg: 'ES256', kid: this.publicJwk.kid, typ: 'JWT' };
    const signingInput = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`;
    const signature = sign('sha256', Buffer.from(signingInput), { key: this.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  /**
   * What a TokenReview answers. `lookupServiceAccountUid` lets a deleted-and-recreated service
   * account invalidate old tokens, as the real server does; an account that does not exist in
   * the double is accepted so tests need not create one.
   */
  async review(
    token: string,
    audiences: string[] | undefined,
    lookupServiceAccountUid: (ns: string, name: string) => string | undefined,
  ): Promise<TokenReviewStatus> {
    const wanted = audiences && audiences.length > 0 ? audiences : this.defaultAudiences;
    let payload: Record<string, unknown>;
    try {
      const verified = await jwtVerify(token, this.publicKey, {
        issuer: this.issuer,
        algorithms: ['ES256'],
        currentDate: new Date(this.clock.now()),
      });
      payload = verified.payload as Record<string, unknown>;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) return { authenticated: false, error: '[invalid bearer token, service account token has expired]' };
      return { authenticated: false, error: '[invalid bearer token, token could not be validated]' };
    }
    const tokenAudiences = typeof payload['aud'] === 'string' ? [payload['aud']] : Array.isArray(payload['aud']) ? (payload['aud'] as string[]) : [];
    const matched = wanted.filter((a) => tokenAudiences.includes(a));
    if (matched.length === 0) {
      return {
        authenticated: false,
        error: `[invalid bearer token, token audiences ${JSON.stringify(tokenAudiences)} is invalid for the target audiences ${JSON.stringify(wanted)}]`,
      };
    }
    const claims = (isPlainObject(payload['kubernetes.io']) ? payload['kubernetes.io'] : {}) as ServiceAccountClaims;
    const namespace = claims.namespace ?? '';
    const name = claims.serviceaccount?.name ?? '';
    const uid = claims.serviceaccount?.uid ?? '';
    const currentUid = lookupServiceAccountUid(namespace, name);
    if (currentUid !== undefined && currentUid !== uid) {
      return { authenticated: false, error: `[invalid bearer token, service account UID (${uid}) does not match claim (${currentUid})]` };
    }
    const extra: Record<string, string[]> = { 'authentication.kubernetes.io/credential-id': [`JTI=${String(payload['jti'] ?? '')}`] };
    if (claims.pod?.name) {
      extra['authentication.kubernetes.io/pod-name'] = [claims.pod.name];
      extra['authentication.kubernetes.io/pod-uid'] = [claims.pod.uid ?? ''];
    }
    return {
      authenticated: true,
      user: {
        username: `system:serviceaccount:${namespace}:${name}`,
        uid,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
        extra,
      },
      audiences: matched,
    };
  }

  /** `GET /openid/v1/jwks`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /** `GET /.well-known/openid-configuration`. */
  openidConfiguration(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: `${this.issuer}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    };
  }
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** A UUID-shaped identifier derived from a name, so repeated tokens for one account agree. */
function stableUid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
