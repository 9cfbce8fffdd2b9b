import type { IssuedCertificate } from './certificate-authority.js';

/**
 * What the certificate service needs to turn a caller's CSR into a chain: our CA signs at once
 * (`CertificateAuthority` is one), a registration authority waits for an external signer.
 */
export interface CsrSigner {
  /**
   * Signs the CSR's key for `identity` (a SPIFFE URI) for `ttlMs` (non-positive: the default).
   * Throws or rejects with a CaError.
   */
  signCsr(csrPem: string, identity: string, ttlMs: number): IssuedCertificate | Promise<IssuedCertificate>;
}
