import type { KubeConfig } from '@kubernetes/client-node';
import { decodeJwt } from 'jose';
import { lazyApiClient } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { Authenticator } from './authenticator.js';
import { parseServiceAccountUser, spiffeId } from '../trust/spiffe.js';

export type JwtPolicy = 'third-party-jwt' | 'first-party-jwt';

export interface KubeTokenAuthenticatorOptions {
  readonly kubeConfig: KubeConfig;
  readonly trustDomain: string;
  /** TOKEN_AUDIENCES, split on commas. */
  readonly audiences: readonly string[];
  /** JWT_POLICY: third-party tokens are reviewed for `audiences`; first-party (legacy) ones for the API server's own. */
  readonly jwtPolicy: JwtPolicy;
  /** REQUIRE_3P_TOKEN: refuse tokens without an audience claim (legacy service account tokens). */
  readonly require3pToken: boolean;
}

const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

/** Service account tokens checked by the Kubernetes TokenReview API. */
export function newKubeTokenAuthenticator(options: KubeTokenAuthenticatorOptions): Authenticator {
  const api = lazyApiClient(options.kubeConfig, (k8s) => k8s.AuthenticationV1Api);
  const audiences = options.jwtPolicy === 'third-party-jwt' ? [...options.audiences] : undefined;
  return {
    name: 'kube-token',
    authenticate: async ({ bearerToken }) => {
      if (!bearerToken) return undefined;
      if (options.require3pToken && !hasAudienceClaim(bearerToken)) {
        throw new CaError('unauthenticated', 'a token without audience (legacy service account token) is not allowed');
      }
      const review = await (
        await api()
      ).createTokenReview({
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: bearerToken, ...(audiences ? { audiences } : {}) } },
      });
      const status = review.status;
      if (!status?.authenticated) throw new CaError('unauthenticated', `token review refused the token: ${status?.error ?? 'not authenticated'}`);
      const user = status.user ?? {};
      if (!(user.groups ?? []).includes(SERVICE_ACCOUNTS_GROUP)) throw new CaError('unauthenticated', 'the token is not a service account token');
      const account = parseServiceAccountUser(user.username ?? '');
      if (!account) throw new CaError('unauthenticated', `unexpected service account user name ${JSON.stringify(user.username)}`);
      return { identities: [spiffeId({ trustDomain: options.trustDomain, ...account })], authenticator: 'kube-token' };
    },
  };
}

/** True when the (unverified) token has an `aud` claim; TokenReview does the verification. */
export function hasAudienceClaim(token: string): boolean {
  try {
    const aud = decodeJwt(token).aud;
    return typeof aud === 'string' ? aud !== '' : Array.isArray(aud) && aud.length > 0;
  } catch {
    return false;
  }
}
