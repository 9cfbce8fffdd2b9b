import type { X509Certificate } from 'node:crypto';

const MAX_DEPTH = 8;

export interface ChainInput {
  readonly leaf: X509Certificate;
  /** Certificates that may link the leaf to an anchor (presented by the peer, or known intermediates). */
  readonly intermediates: readonly X509Certificate[];
  /** The trust anchors: a chain is good once it reaches a certificate signed by one of them. */
  readonly anchors: readonly X509Certificate[];
  readonly nowMs: number;
}

/**
 * Why `leaf` does not chain to one of `anchors` at `nowMs`, or undefined when it does. Every
 * certificate on the way, the anchor included, must be valid now; issuers must be CA certificates.
 */
export function chainProblem(input: ChainInput): string | undefined {
  const { anchors, intermediates, nowMs } = input;
  let current = input.leaf;
  for (let depth = 0; ; depth++) {
    if (!isValidAt(current, nowMs)) return 'a certificate of the chain is not valid now';
    if (anchors.some((anchor) => isValidAt(anchor, nowMs) && signedBy(current, anchor))) return undefined;
    const issuer = intermediates.find((c) => c.ca && signedBy(current, c));
    if (!issuer || depth >= MAX_DEPTH) return 'the certificate does not chain to a trusted root';
    current = issuer;
  }
}

function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  return issuer.ca && cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
}

function isValidAt(cert: X509Certificate, nowMs: number): boolean {
  return Date.parse(cert.validFrom) <= nowMs && nowMs <= Date.parse(cert.validTo);
}
