import { X509Certificate } from 'node:crypto';
import type { Clock } from '../controllers/runtime/index.js';
import { CaError } from './ca-error.js';
import type { Authenticator } from './authenticator.js';
import type { CertificateAuthority } from './certificate-authority.js';
import { parseSpiffeId } from './spiffe.js';

export interface ClientCertAuthenticatorOptions {
  readonly ca: CertificateAuthority;
  readonly trustDomain: string;
  readonly clock: Clock;
}

const MAX_DEPTH = 8;

/**
 * A workload renewing its own certificate: the chain it presented over TLS must lead to one of
 * the CA's roots and be valid now; the identity is its SPIFFE URI in our trust domain.
 */
export function newClientCertAuthenticator(options: ClientCertAuthenticatorOptions): Authenticator {
  return {
    name: 'client-cert',
    authenticate: async ({ peerCertificates }) => {
      const [leafDer, ...presented] = peerCertificates ?? [];
      if (!leafDer) return undefined;
      const now = options.clock.now();
      const leaf = new X509Certificate(leafDer);
      if (leaf.ca) throw new CaError('unauthenticated', 'the client certificate is a CA certificate');
      const bundle = options.ca.bundle();
      const anchors = bundle.roots.map((r) => r.x509);
      const candidates = [...presented.map((d) => new X509Certificate(d)), ...bundle.intermediates.map((c) => c.x509)];
      let current = leaf;
      for (let depth = 0; ; depth++) {
        if (!isValidAt(current, now)) throw new CaError('unauthenticated', 'a certificate of the client chain is not valid now');
        if (anchors.some((root) => signedBy(current, root) && isValidAt(root, now))) break;
        const issuer = candidates.find((c) => c.ca && signedBy(current, c));
        if (!issuer || depth >= MAX_DEPTH) throw new CaError('unauthenticated', 'the client certificate does not chain to a CA root');
        current = issuer;
      }
      const uris = (leaf.subjectAltName ?? '')
        .split(', ')
        .filter((san) => san.startsWith('URI:'))
        .map((san) => san.slice('URI:'.length));
      const identities = uris.filter((uri) => parseSpiffeId(uri)?.trustDomain === options.trustDomain);
      if (identities.length !== 1) throw new CaError('unauthenticated', 'the client certificate must carry exactly one SPIFFE identity of the trust domain');
      return { identities, authenticator: 'client-cert' };
    },
  };
}

function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  return cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

function isValidAt(cert: X509Certificate, nowMs: number): boolean {
  return Date.parse(cert.validFrom) <= nowMs && nowMs <= Date.parse(cert.validTo);
}
