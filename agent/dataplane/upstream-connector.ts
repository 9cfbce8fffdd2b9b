import { Agent as HttpAgent, type Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type PeerCertificate as NodePeerCertificate } from 'node:tls';
import type { UpstreamTls } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { newSecureContextCache, tlsMaterialFor } from './tls-material.js';

/** Where and how to reach one upstream. */
export interface UpstreamTarget {
  readonly address: string;
  readonly port: number;
  readonly tls: UpstreamTls;
}

function sanCheck(tls: Extract<UpstreamTls, { kind: 'tls' }>): ConnectionOptions['checkServerIdentity'] {
  const verify = tls.verifySubjectAltName;
  // The mesh checks SPIFFE URI SANs, not host names; without matchers only the chain is checked.
  return (_host: string, certificate: NodePeerCertificate) => {
    if (!verify) return undefined;
    const sans = (certificate.subjectaltname ?? '').split(', ').filter((entry) => entry !== '');
    const names = sans.map((entry) => entry.slice(entry.indexOf(':') + 1));
    if (names.some((name) => verify(name))) return undefined;
    return new Error(`upstream certificate SANs ${JSON.stringify(names)} match none of ${JSON.stringify(tls.sanMatchers)}`);
  };
}

/** Secure contexts by the PEM they hold: building one parses the chain, key and bundle, too slow for every connection. */
export type SecureContextCache = ReturnType<typeof newSecureContextCache>;

/**
 * TLS options for a connection to an upstream (SNI, ALPN, the client certificate, the trust
 * bundle and the SAN check). The PEM stays in the options: the keep-alive pool keys connections
 * by it, so a rotated certificate gets new connections.
 */
export function upstreamTlsOptions(tls: Extract<UpstreamTls, { kind: 'tls' }>, secrets: SecretSet, contexts: SecureContextCache): ConnectionOptions {
  const material = tlsMaterialFor(tls, secrets);
  return {
    ...material,
    secureContext: contexts(material),
    ...(tls.sni ? { servername: tls.sni } : {}),
    // HTTP/1.1 upstream only: the embedded data plane speaks HTTP/1.1 to its peers.
    ALPNProtocols: tls.alpn.includes('http/1.1') || tls.alpn.length === 0 ? ['http/1.1'] : [...tls.alpn],
    rejectUnauthorized: material.ca !== undefined,
    checkServerIdentity: sanCheck(tls),
  };
}

/** Opens a raw (TCP proxy) connection to an upstream, originating TLS when the decision says so. */
export function connectUpstream(target: UpstreamTarget, secrets: SecretSet, connectTimeoutMs: number, contexts: SecureContextCache): Socket {
  const socket =
    target.tls.kind === 'tls'
      ? tlsConnect({ host: target.address, port: target.port, ...upstreamTlsOptions(target.tls, secrets, contexts) }).setNoDelay(true)
      : netConnect({ host: target.address, port: target.port, noDelay: true });
  socket.setTimeout(connectTimeoutMs, () => socket.destroy(new Error('upstream connect timeout')));
  socket.once(target.tls.kind === 'tls' ? 'secureConnect' : 'connect', () => socket.setTimeout(0));
  return socket;
}

/** Keep-alive pools for HTTP upstreams; the HTTPS pool keys connections by their TLS options too. */
export function newUpstreamAgents(): { plain: Agent; tls: Agent; secureContexts: SecureContextCache; destroy(): void } {
  // No Nagle: small request and response frames would wait for delayed ACKs (about 200 ms at p90).
  const plain = new HttpAgent({ keepAlive: true, maxSockets: 256, noDelay: true } as ConstructorParameters<typeof HttpAgent>[0]);
  const tls = new HttpsAgent({ keepAlive: true, maxSockets: 256, noDelay: true } as ConstructorParameters<typeof HttpsAgent>[0]);
  // tls.connect does not pass `noDelay` on to the TCP socket under the TLS one: set it once created.
  const createTlsConnection = (tls as unknown as { createConnection: (options: object, callback?: unknown) => Socket }).createConnection.bind(tls);
  (tls as unknown as { createConnection: (options: object, callback?: unknown) => Socket }).createConnection = (options, callback) => createTlsConnection(options, callback).setNoDelay(true);
  return {
    plain,
    tls,
    secureContexts: newSecureContextCache(),
    destroy() {
      plain.destroy();
      tls.destroy();
    },
  };
}
