import { X509Certificate } from 'node:crypto';
import type { Clock } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { Authenticator } from './authenticator.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import { parseSpiffeId } from '../trust/spiffe.js';
import type { TrustBundleSet } from '../trust/trust-bundle-set.js';
import { chainProblem } from '../../pki/index.js';

export interface ClientCertAuthenticatorOptions {
  /** Our CA: its roots, and the intermediates a workload need not present. Required without `trustBundles`. */
  readonly ca?: CertificateAuthority;
  readonly trustDomain: string;
  readonly clock: Clock;
  /**
   * The roots of each trust domain (federation with SPIFFE_BUNDLE_ENDPOINTS, or `--caCertFile`
   * for our own domain when the daemon runs no CA). A certificate is then checked against the
   * roots of the domain its SPIFFE ID names, and only those. Without it, only certificates of our
   * trust domain chaining to the CA are accepted.
   */
  readonly trustBundles?: Pick<TrustBundleSet, 'rootsFor'>;
}

/**
 * A workload renewing its own certificate: the chain it presented over TLS must lead to a root
 * of the trust domain of its one SPIFFE ID and be valid now; that ID is the caller identity.
 */
export function newClientCertAuthenticator(options: ClientCertAuthenticatorOptions): Authenticator {
  const { ca, trustDomain, trustBundles } = options;
  if (!ca && !trustBundles) throw new CaError('ca-unavailable', 'the client certificate authenticator needs the CA or a trust bundle set');
  return {
    name: 'client-cert',
    authenticate: async ({ peerCertificates }) => {
      const [leafDer, ...presented] = peerCertificates ?? [];
      if (!leafDer) return undefined;
      const leaf = new X509Certificate(leafDer);
      if (leaf.ca) throw new CaError('unauthenticated', 'the client certificate is a CA certificate');
      const ids = (leaf.subjectAltName ?? '')
        .split(', ')
        .filter((san) => san.startsWith('URI:'))
        .map((san) => san.slice('URI:'.length))
        .filter((uri) => parseSpiffeId(uri) !== undefined);
      const identities = trustBundles ? ids : ids.filter((uri) => parseSpiffeId(uri)?.trustDomain === trustDomain);
      const identity = identities.length === 1 ? identities[0] : undefined;
      if (identity === undefined) {
        throw new CaError(
          'unauthenticated',
          trustBundles
            ? 'the client certificate must carry exactly one workload SPIFFE identity'
            : 'the client certificate must carry exactly one SPIFFE identity of the trust domain',
        );
      }
      const domain = parseSpiffeId(identity)!.trustDomain;
      const ours = domain === trustDomain;
      const anchors = trustBundles ? trustBundles.rootsFor(domain) : ca!.bundle().roots;
      if (anchors.length === 0) throw new CaError('unauthenticated', `no trust bundle for trust domain ${domain}`);
      // Our intermediates may link our own workloads only; a foreign chain is what it presents.
      const known = ours && ca ? ca.bundle().intermediates.map((c) => c.x509) : [];
      const problem = chainProblem({
        leaf,
        intermediates: [...presented.map((d) => new X509Certificate(d)), ...known],
        anchors: anchors.map((r) => r.x509),
        nowMs: options.clock.now(),
      });
      if (problem) throw new CaError('unauthenticated', `client certificate of ${domain}: ${problem}`);
      return { identities: [identity], authenticator: 'client-cert' };
    },
  };
}
