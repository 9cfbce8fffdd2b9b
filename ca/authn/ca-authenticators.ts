import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock, Settings } from '../../controllers/runtime/index.js';
import type { Authenticator } from './authenticator.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import { newClientCertAuthenticator } from './client-cert-authenticator.js';
import { jwtRuleFromSettings, newJwtAuthenticator } from './jwt-authenticator.js';
import { newKubeTokenAuthenticator, type JwtPolicy } from './kube-token-authenticator.js';
import type { TrustBundleSet } from '../trust/trust-bundle-set.js';

export interface CaAuthenticatorsOptions {
  readonly settings: Settings<'pilot-discovery'>;
  /** Our CA; absent with external signing, where `trustBundles` holds the signer's roots. */
  readonly ca?: CertificateAuthority;
  readonly trustDomain: string;
  /** With SPIFFE_BUNDLE_ENDPOINTS: client certificates of federated domains verify against their own roots. */
  readonly trustBundles?: TrustBundleSet;
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
  const { settings, trustDomain } = options;
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
        audiences: settings.get('TOKEN_AUDIENCES').split(',').map((a) => a.trim()).filter((a) => a !== ''),
        jwtPolicy: settings.get('JWT_POLICY') as JwtPolicy,
        require3pToken: settings.get('REQUIRE_3P_TOKEN'),
      }),
    );
  }
  const rule = jwtRuleFromSettings(settings);
  if (rule) out.push(newJwtAuthenticator({ rule, trustDomain, clock: options.clock }));
  return out;
}
