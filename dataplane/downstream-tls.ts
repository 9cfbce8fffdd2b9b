import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { Logger } from '../runtime/index.js';
import type { ConnectionContext } from './connection-context.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { DownstreamTls, PeerCertificate } from './decisions/index.js';
import { newPeerChainVerifier } from './peer-verification.js';
import type { SecretSet } from './sds-subscriber.js';
import { newSecureContextCache, peerCertificateFacts, tlsMaterialFor } from './tls-material.js';
import { errorMessage } from '../runtime/index.js';

export interface DownstreamTlsOptions {
  secrets: () => SecretSet;
  stats: DataPlaneStats;
  log: Logger;
}

/**
 * Terminates a filter chain's downstream TLS as Envoy does, verifying the client certificate
 * itself, then hands on the decrypted socket with the context the handshake completed (`tls`, the
 * peer certificate). A connection that fails the handshake or the checks is closed.
 */
export type DownstreamTlsTerminator = (
  socket: Duplex,
  tls: DownstreamTls,
  context: ConnectionContext,
  onSecured: (secure: TLSSocket, secured: ConnectionContext) => void,
) => void;

export function newDownstreamTlsTerminator(options: DownstreamTlsOptions): DownstreamTlsTerminator {
  const { stats, log } = options;
  const secureContext = newSecureContextCache();
  const verifyPeerChain = newPeerChainVerifier();
  return (socket, tls, context, onSecured) => {
    let material;
    try {
      material = tlsMaterialFor(tls, options.secrets());
    } catch (error) {
      log.warn({ error: errorMessage(error), listener: context.listener }, 'no certificate for TLS yet; closing');
      socket.destroy();
      return;
    }
    const alpn = [...tls.alpn];
    // As Envoy: a validation context (trust bundle or SAN matchers) asks the client for a
    // certificate and verifies one presented; `require_client_certificate` also refuses none.
    const verifiesPeer = tls.requireClientCertificate || material.ca !== undefined || tls.verifySubjectAltName !== undefined;
    const secure = new TLSSocket(socket, {
      isServer: true,
      secureContext: secureContext(material),
      requestCert: verifiesPeer,
      // OpenSSL then refuses a handshake without a certificate; the chain itself is checked below,
      // since Node verifies nothing on a server socket made outside a tls.Server.
      rejectUnauthorized: tls.requireClientCertificate,
      ...(alpn.length > 0 ? { ALPNProtocols: alpn } : {}),
    });
    secure.on('error', () => secure.destroy());
    secure.once('secure', () => {
      const presented = verifiesPeer ? secure.getPeerCertificate(true) : undefined;
      const peer: PeerCertificate | undefined = presented ? peerCertificateFacts(presented) : undefined;
      if (tls.requireClientCertificate && !peer) {
        secure.destroy();
        return;
      }
      if (presented && peer && material.ca !== undefined) {
        const problem = verifyPeerChain(presented, material.ca, Date.now());
        if (problem) {
          stats.inc('ssl.fail_verify_error');
          log.debug({ listener: context.listener, problem }, 'client certificate refused');
          secure.destroy();
          return;
        }
      }
      const verifySan = tls.verifySubjectAltName;
      if (peer && verifySan && !peer.uriSans.some((san) => verifySan(san, 'URI')) && !peer.dnsSans.some((san) => verifySan(san, 'DNS'))) {
        stats.inc('ssl.fail_verify_san');
        secure.destroy();
        return;
      }
      // What a tls.Server does when it hands over a socket; HTTP/2 waits for it otherwise.
      (secure as TLSSocket & { secureConnecting: boolean }).secureConnecting = false;
      onSecured(secure, { ...context, tls: true, facts: { ...context.facts, ...(peer ? { peerCertificate: peer } : {}) } });
    });
  };
}
