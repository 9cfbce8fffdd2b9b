import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../runtime/index.js';
import type { Authenticator } from './authenticator.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import { newClientCertAuthenticator } from './client-cert-authenticator.js';
import { newJwtAuthenticator, type JwtRule } from './jwt-authenticator.js';
import { newKubeTokenAuthenticator, type KubeTokenAuthenticatorOptions } from './kube-token-authenticator.js';
import type { TrustBundleSet } from '../trust/trust-bundle-set.js';

/** How callers of the certificate service may prove who they are (`ca-settings.ts` maps it from the settings). */
export interface CaAuthenticationSettings {
  /** TOKEN_AUDIENCES, JWT_POLICY and REQUIRE_3P_TOKEN: how service account tokens are reviewed (Kubernetes mode). */
  readonly serviceAccountTokens: Pick<KubeTokenAuthenticatorOptions, 'audiences' | 'jwtPolicy' | 'require3pToken'>;
  /** JWT_RULE, or TOKEN_ISSUER with AUDIENCE: the OIDC issuer whose tokens are accepted; none when absent. */
  readonly jwtRule?: JwtRule;
}

export interface CaAuthenticatorsOptions {
  readonly authentication: CaAuthenticationSettings;
  /** Our CA; absent with external signing, where `trustBundles` holds the signer's roots. */
  readonly ca?: CertificateAuthority;
  readonly trustDomain: string;
  /**
   * The roots client certificates verify against, by the trust domain they name: with
   * SPIFFE_BUNDLE_ENDPOINTS, federated domains' own roots; without a CA, `--caCertFile`.
   */
  readonly trustBundles?: Pick<TrustBundleSet, 'rootsFor'>;
  readonly clock: Clock;
  /** Kubernetes mode: service account tokens go to TokenReview. Absent in local mode. */
  readonly kubeConfig?: KubeConfig;
}

/**
 * The authenticators of the certificate service, in the order they are tried: the client
 * certificate of a renewing workload, Kubernetes TokenReview, then the OIDC issuer of
 * JWT_RULE or TOKEN_ISSUER/AUDIENCE.
 */
export function newCaAuthenticators(options: CaAuthenticatorsOptions): Authenticator[] {
  const { authentication, trustDomain } = options;
  const out: Authenticator[] = [
    newClientCertAuthenticator({
      trustDomain,
      clock: options.clock,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.trustBundles ? { trustBundles: options.trustBundles } : {}),
    }),
  ];
  if (options.kubeConfig) {
    out.push(
      newKubeTokenAuthenticator({
        kubeConfig: options.kubeConfig,
        trustDomain,
        ...authentication.serviceAccountTokens,
      }),
    );
  }
  const rule = authentication.jwtRule;
  if (rule) out.push(newJwtAuthenticator({ rule, trustDomain, clock: options.clock }));
  return out;
}
