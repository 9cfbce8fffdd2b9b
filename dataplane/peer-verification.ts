import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate } from 'node:tls';
import { chainProblem, decodePemBlocks } from '../pki/index.js';

/** Why a peer's certificate chain is not trusted by a bundle, or undefined when it is. */
export type PeerChainVerifier = (peer: DetailedPeerCertificate, trustBundlePem: string, nowMs: number) => string | undefined;

/** The certificates of a peer's chain, leaf first, as the TLS session holds them. */
function presentedChain(peer: DetailedPeerCertificate): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  for (let current: DetailedPeerCertificate | undefined = peer; current?.raw && chain.length < 16; current = current.issuerCertificate) {
    const fingerprint = current.fingerprint256;
    if (seen.has(fingerprint)) break;
    seen.add(fingerprint);
    chain.push(new X509Certificate(current.raw));
  }
  return chain;
}

/**
 * Verifies peer chains against trust bundles as Envoy's default certificate validator does with a
 * `validation_context`: the chain must lead to a certificate of the bundle and be valid now. Node
 * does not verify a client certificate on a TLS socket made outside a `tls.Server`, so a data plane
 * that terminates TLS on its own sockets must. Bundles are parsed once per distinct PEM.
 */
export function newPeerChainVerifier(): PeerChainVerifier {
  let bundles = new Map<string, X509Certificate[]>();
  const anchorsOf = (pem: string): X509Certificate[] => {
    let anchors = bundles.get(pem);
    if (!anchors) {
      if (bundles.size >= 8) bundles = new Map();
      anchors = decodePemBlocks(pem)
        .filter((block) => block.label === 'CERTIFICATE')
        .flatMap((block) => {
          try {
            return [new X509Certificate(block.der)];
          } catch {
            return [];
          }
        });
      bundles.set(pem, anchors);
    }
    return anchors;
  };
  return (peer, trustBundlePem, nowMs) => {
    const anchors = anchorsOf(trustBundlePem);
    if (anchors.length === 0) return 'the trust bundle holds no certificate';
    let chain: X509Certificate[];
    try {
      chain = presentedChain(peer);
    } catch {
      return 'the peer certificate cannot be parsed';
    }
    const [leaf, ...intermediates] = chain;
    if (!leaf) return 'no peer certificate';
    return chainProblem({ leaf, intermediates, anchors, nowMs });
  };
}
