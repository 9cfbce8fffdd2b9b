import type { Logger } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import { parseCertificatesPem, type CertificateInfo } from '../x509/certificate-info.js';
import { errorMessage } from '../../runtime/index.js';

/**
 * Where our own trust domain's roots come from: the CA (its trust bundle follows root
 * rotation) or, with external signing, the signer's roots. `CertificateAuthority` is one.
 */
export interface RootBundleSource {
  rootBundlePem(): string;
  /** Returns the unsubscribe function. */
  onRootBundleChange(listener: (rootBundlePem: string) => void): () => void;
}

/** Trust anchors by trust domain as PEM text: our domain first, then the federated ones by name. */
export type TrustBundleSnapshot = ReadonlyMap<string, string>;

/**
 * The roots trusted for each trust domain: ours from the CA, the others fetched from their
 * SPIFFE bundle endpoints. A certificate is verified only against the roots of the trust
 * domain its SPIFFE ID names, so no domain can vouch for another's identities.
 */
export interface TrustBundleSet {
  readonly trustDomain: string;
  /** The anchors of one trust domain; empty for a domain we do not federate with. */
  rootsFor(trustDomain: string): readonly CertificateInfo[];
  /** Our domain first, then the federated domains that have roots, by name. */
  trustDomains(): string[];
  snapshot(): TrustBundleSnapshot;
  /** Every root of every domain once, PEM: what a proxy verifying peers of all domains trusts. */
  allRootsPem(): string;
  /**
   * Replaces the fetched roots of a domain (our own domain's are added to the CA's). Returns
   * true, and notifies, when they changed.
   */
  setFederatedRoots(trustDomain: string, roots: readonly CertificateInfo[]): boolean;
  removeFederatedRoots(trustDomain: string): boolean;
  /** Called with the new snapshot after every change; returns the unsubscribe function. */
  onChange(listener: (snapshot: TrustBundleSnapshot) => void): () => void;
  /** Stops following the local root source. */
  close(): void;
}

export interface TrustBundleSetOptions {
  /** Our trust domain (TRUST_DOMAIN, `cluster.local` by default). */
  readonly trustDomain: string;
  readonly localRoots: RootBundleSource;
  /** The `trustBundle` scope; a listener that throws is logged here. */
  readonly log?: Logger;
}

export function newTrustBundleSet(options: TrustBundleSetOptions): TrustBundleSet {
  const { trustDomain, localRoots, log } = options;
  let localPem = localRoots.rootBundlePem();
  let local = parseCertificatesPem(localPem, `roots of ${trustDomain}`);
  const federated = new Map<string, readonly CertificateInfo[]>();
  const listeners = new Set<(snapshot: TrustBundleSnapshot) => void>();
  let cached: TrustBundleSnapshot | undefined;
  // Read on every client certificate check: merged once per change.
  let ownRoots: readonly CertificateInfo[] | undefined;

  const rootsFor = (domain: string): readonly CertificateInfo[] => {
    if (domain !== trustDomain) return federated.get(domain) ?? [];
    ownRoots ??= unique([...local, ...(federated.get(domain) ?? [])]);
    return ownRoots;
  };
  const trustDomains = (): string[] => [trustDomain, ...[...federated.keys()].filter((d) => d !== trustDomain).sort()];
  const snapshot = (): TrustBundleSnapshot => {
    cached ??= new Map(trustDomains().map((domain) => [domain, pemOf(rootsFor(domain))]));
    return cached;
  };
  const notify = (): void => {
    cached = undefined;
    ownRoots = undefined;
    const current = snapshot();
    for (const listener of [...listeners]) {
      try {
        listener(current);
      } catch (err) {
        log?.error({ error: errorMessage(err) }, 'trust bundle listener failed');
      }
    }
  };

  const unsubscribe = localRoots.onRootBundleChange((pem) => {
    if (pem === localPem) return;
    localPem = pem;
    local = parseCertificatesPem(pem, `roots of ${trustDomain}`);
    log?.info({ trustDomain, roots: local.length }, 'local trust bundle changed');
    notify();
  });

  return {
    trustDomain,
    rootsFor,
    trustDomains,
    snapshot,
    allRootsPem: () => pemOf(unique(trustDomains().flatMap(rootsFor))),
    setFederatedRoots: (domain, roots) => {
      if (roots.length === 0) throw new CaError('ca-material-invalid', `the trust bundle of ${domain} needs at least one root`);
      const before = federated.get(domain);
      if (before && pemOf(before) === pemOf(roots)) return false;
      federated.set(domain, [...roots]);
      notify();
      return true;
    },
    removeFederatedRoots: (domain) => {
      if (!federated.delete(domain)) return false;
      notify();
      return true;
    },
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: unsubscribe,
  };
}

function unique(certs: readonly CertificateInfo[]): CertificateInfo[] {
  const seen = new Set<string>();
  return certs.filter((c) => {
    const key = c.der.toString('base64');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function pemOf(certs: readonly CertificateInfo[]): string {
  return certs.map((c) => c.pem).join('');
}
