import type { Clock, MeshMetrics } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import {
  EXT_KEY_USAGE,
  KEY_USAGE,
  authorityKeyIdExtension,
  basicConstraintsExtension,
  buildCertificate,
  extKeyUsageExtension,
  keyIdentifier,
  keyUsageExtension,
  newSerialSource,
  EXTENSION_OID,
  subjectAltNameExtension,
  subjectKeyIdExtension,
  type SubjectAltNames,
} from './certificate-builder.js';
import { parseAndVerifyCsr } from '../x509/csr.js';
import { derOid, derSequence } from '../x509/der.js';
import type { KeyCertBundle } from './key-cert-bundle.js';
import { encodePem } from '../../pki/index.js';

export interface IssuedCertificate {
  readonly certPem: string;
  /** Leaf first, then the intermediates, then the trust bundle (every root, one PEM text). */
  readonly certChainPem: readonly string[];
  readonly notAfterMs: number;
}

export interface IssueRequest {
  readonly subjectPublicKeyInfo: Buffer;
  readonly sans: SubjectAltNames;
  /** Requested lifetime; non-positive means the default TTL. */
  readonly ttlMs: number;
}

export interface CertificateAuthority {
  /** The CA material in use now (a snapshot; rotation replaces it). */
  bundle(): KeyCertBundle;
  /** Every root workloads should trust, PEM. */
  rootBundlePem(): string;
  /** Switches to new material (root rotation); certificates issued later use it. */
  setBundle(bundle: KeyCertBundle): void;
  /** Calls `listener` after each `setBundle` whose trust bundle differs; returns the unsubscribe function. */
  onRootBundleChange(listener: (rootBundlePem: string) => void): () => void;
  /**
   * Verifies the CSR and signs its key for `identity` (a SPIFFE URI) alone: names in the CSR
   * are ignored. Throws CaError: csr-malformed, csr-signature, csr-unsupported, ttl-too-long.
   */
  signCsr(csrPem: string, identity: string, ttlMs: number): IssuedCertificate;
  /** Signs a public key with the given names (the daemon's own serving certificate). */
  issue(request: IssueRequest): IssuedCertificate;
  /** The lifetime a request gets: the default for non-positive, refused above the maximum. */
  resolveTtl(requestedMs: number): number;
}

export interface CertificateAuthorityOptions {
  readonly bundle: KeyCertBundle;
  readonly clock: Clock;
  /** DEFAULT_WORKLOAD_CERT_TTL. */
  readonly defaultTtlMs: number;
  /** MAX_WORKLOAD_CERT_TTL. */
  readonly maxTtlMs: number;
  /** When given, the expiry gauges follow the material in use. */
  readonly metrics?: MeshMetrics<'pilot-discovery'>;
}

/** What every certificate of one bundle shares, encoded once. */
interface Prepared {
  readonly bundle: KeyCertBundle;
  readonly fixedExtensions: readonly Buffer[];
  readonly chainSuffix: readonly string[];
}

export function newCertificateAuthority(options: CertificateAuthorityOptions): CertificateAuthority {
  const { clock, defaultTtlMs, maxTtlMs, metrics } = options;
  let prepared = prepare(options.bundle);
  const nextSerial = newSerialSource();
  const sanOid = derOid(EXTENSION_OID.subjectAltName);
  const skiOid = derOid(EXTENSION_OID.subjectKeyId);
  const emptyName = derSequence();
  const listeners = new Set<(rootBundlePem: string) => void>();
  recordExpiry(metrics, prepared.bundle, clock.now());

  const resolveTtl = (requestedMs: number): number => {
    if (requestedMs <= 0) return defaultTtlMs;
    if (requestedMs > maxTtlMs) {
      throw new CaError('ttl-too-long', `requested TTL ${Math.round(requestedMs / 1000)}s is above the maximum ${Math.round(maxTtlMs / 1000)}s`);
    }
    return requestedMs;
  };

  const issue = (request: IssueRequest): IssuedCertificate => {
    const ttlMs = resolveTtl(request.ttlMs);
    const { bundle, fixedExtensions, chainSuffix } = prepared;
    const nowMs = Math.floor(clock.now() / 1000) * 1000;
    if (bundle.chainExpiryMs <= nowMs) throw new CaError('ca-unavailable', 'the CA certificate chain has expired');
    // A certificate never outlives the chain that vouches for it.
    const notAfterMs = Math.min(nowMs + ttlMs, bundle.chainExpiryMs);
    let der: Buffer;
    try {
      der = buildCertificate(
        {
          serial: nextSerial(),
          issuer: bundle.signingCert.subject,
          subject: emptyName,
          notBeforeMs: nowMs,
          notAfterMs,
          subjectPublicKeyInfo: request.subjectPublicKeyInfo,
          extensions: [
            ...fixedExtensions,
            subjectKeyIdExtension(keyIdentifier(request.subjectPublicKeyInfo), skiOid),
            subjectAltNameExtension(request.sans, true, sanOid),
          ],
        },
        bundle.signer,
      );
    } catch (err) {
      if (err instanceof CaError) throw err;
      throw new CaError('sign-failed', 'signing the certificate failed', { cause: err });
    }
    const certPem = encodePem('CERTIFICATE', der);
    return { certPem, certChainPem: [certPem, ...chainSuffix], notAfterMs };
  };

  return {
    bundle: () => prepared.bundle,
    rootBundlePem: () => prepared.bundle.rootBundlePem,
    setBundle: (bundle) => {
      const previous = prepared.bundle.rootBundlePem;
      prepared = prepare(bundle);
      recordExpiry(metrics, bundle, clock.now());
      if (bundle.rootBundlePem !== previous) {
        for (const listener of [...listeners]) listener(bundle.rootBundlePem);
      }
    },
    onRootBundleChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    resolveTtl,
    issue,
    signCsr: (csrPem, identity, ttlMs) => {
      // The TTL check is cheap: refuse before the signature verification.
      resolveTtl(ttlMs);
      const csr = parseAndVerifyCsr(csrPem);
      return issue({ subjectPublicKeyInfo: csr.subjectPublicKeyInfo, sans: { uris: [identity] }, ttlMs });
    },
  };
}

function prepare(bundle: KeyCertBundle): Prepared {
  return {
    bundle,
    fixedExtensions: [
      keyUsageExtension([KEY_USAGE.digitalSignature, KEY_USAGE.keyEncipherment]),
      extKeyUsageExtension([EXT_KEY_USAGE.serverAuth, EXT_KEY_USAGE.clientAuth]),
      basicConstraintsExtension(false),
      authorityKeyIdExtension(bundle.signingCert.subjectKeyId),
    ],
    chainSuffix: [...bundle.intermediates.map((c) => c.pem), bundle.rootBundlePem],
  };
}

/** Sets the expiry gauges: unix seconds, negative (seconds since expiry) once expired. */
export function recordExpiry(metrics: MeshMetrics<'pilot-discovery'> | undefined, bundle: KeyCertBundle, nowMs: number): void {
  if (!metrics) return;
  const value = (expiryMs: number): number => (expiryMs > nowMs ? Math.floor(expiryMs / 1000) : Math.floor((expiryMs - nowMs) / 1000));
  metrics.gauge('ca_server_root_cert_expiry_timestamp').set(value(bundle.rootExpiryMs));
  metrics.gauge('ca_server_cert_chain_expiry_timestamp').set(value(bundle.chainExpiryMs));
}
