import type { experimental } from '@grpc/grpc-js';

/** A key and certificate chain to serve, PEM. */
export interface ServingKeyCertificate {
  readonly certChainPem: string;
  readonly keyPem: string;
}

/**
 * The daemon's serving identity as the webhook server needs it: every new key and certificate,
 * the current one first. It is the same grpc-js certificate provider the xDS TLS listener serves
 * (the CA-issued certificate, renewed, or the `--tlsCertFile` files, re-read as they change).
 */
export interface ServingIdentity {
  /** Calls `listener` with the current identity (possibly on a later tick) and every change; returns the unsubscribe. */
  watch(listener: (identity: ServingKeyCertificate) => void): () => void;
}

export function servingIdentityOf(provider: experimental.CertificateProvider): ServingIdentity {
  return {
    watch(listener) {
      const onUpdate: experimental.IdentityCertificateUpdateListener = (update) => {
        if (update) listener({ certChainPem: update.certificate.toString('utf8'), keyPem: update.privateKey.toString('utf8') });
      };
      provider.addIdentityCertificateListener(onUpdate);
      return () => provider.removeIdentityCertificateListener(onUpdate);
    },
  };
}

/** The PEM trust bundle clients verify the serving certificate with: what goes in a webhook's `caBundle`. */
export interface CaBundleSource {
  /** Calls `listener` with the current bundle (possibly on a later tick) and every change; returns the unsubscribe. */
  watch(listener: (bundlePem: string) => void): () => void;
}

export function caBundleSourceOf(provider: experimental.CertificateProvider): CaBundleSource {
  return {
    watch(listener) {
      const onUpdate: experimental.CaCertificateUpdateListener = (update) => {
        if (update) listener(update.caCertificate.toString('utf8'));
      };
      provider.addCaCertificateListener(onUpdate);
      return () => provider.removeCaCertificateListener(onUpdate);
    },
  };
}
