import { Agent as HttpAgent, type Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type PeerCertificate as NodePeerCertificate, type SecureContext } from 'node:tls';
import type { SanType, UpstreamTls } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { newSecureContextCache, tlsMaterialFor } from './tls-material.js';
import { recentEntry } from './recent-map.js';

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
    const typed = sans.flatMap((entry): [string, SanType][] =>
      entry.startsWith('DNS:') ? [[entry.slice(4), 'DNS']] : entry.startsWith('URI:') ? [[entry.slice(4), 'URI']] : [],
    );
    if (typed.some(([name, type]) => verify(name, type))) return undefined;
    return new Error(`upstream certificate SANs ${JSON.stringify(names)} match none of ${JSON.stringify(tls.sanMatchers)}`);
  };
}

/** Secure contexts by the PEM they hold: building one parses the chain, key and bundle, too slow for every connection. */
export type SecureContextCache = ReturnType<typeof newSecureContextCache>;

/**
 * TLS options for a connection to an upstream (SNI, ALPN, the secure context holding the client
 * certificate and the trust bundle, the SAN check). The PEMs themselves stay out: the keep-alive
 * pool keys connections by the secure context instead (a rotated certificate or bundle is another
 * context, so it gets new connections), without hashing kilobytes of PEM per request.
 */
export function upstreamTlsOptions(tls: Extract<UpstreamTls, { kind: 'tls' }>, secrets: SecretSet, contexts: SecureContextCache): ConnectionOptions {
  const material = tlsMaterialFor(tls, secrets);
  return {
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

/** Keep-alive pools for HTTP upstreams. */
export interface UpstreamAgents {
  readonly plain: Agent;
  /**
   * The TLS pool for an upstream's TLS settings. Within it, connections are pooled by host, port
   * and secure context (the certificate, key and CA), never by the SAN rules or SNI-independent settings a connection was verified
   * against, so each distinct set of them gets its own pool: a DestinationRule that tightens its
   * SANs is never served by a connection verified under the old ones (Envoy drains a changed
   * cluster's pools likewise).
   */
  tlsFor(tls: Extract<UpstreamTls, { kind: 'tls' }>): Agent;
  readonly secureContexts: SecureContextCache;
  destroy(): void;
}

/** Pools kept for distinct TLS settings; the least recently used beyond this are closed. */
const MAX_TLS_POOLS = 32;

export function newUpstreamAgents(): UpstreamAgents {
  // No Nagle: small request and response frames would wait for delayed ACKs (about 200 ms at p90).
  const plain = new HttpAgent({ keepAlive: true, maxSockets: 256, noDelay: true } as ConstructorParameters<typeof HttpAgent>[0]);
  const pools = new Map<string, Agent>();
  // The secure context a connection was made with (its certificate, key and trust bundle) by a
  // number: what Node would key the pool by, were the PEMs in the options.
  const contextIds = new WeakMap<SecureContext, string>();
  let contexts = 0;
  const contextId = (context: SecureContext | undefined): string => {
    if (!context) return '';
    let id = contextIds.get(context);
    if (id === undefined) contextIds.set(context, (id = String(++contexts)));
    return id;
  };
  const newTlsAgent = (): Agent => {
    // No TLS session resumption: Node skips checkServerIdentity on a resumed session and shows no
    // peer certificate, so the SAN rules would go unchecked and the peer's identity unknown. Every
    // new connection is a full handshake (connections are pooled, so new ones are few).
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 256, noDelay: true, maxCachedSessions: 0 } as ConstructorParameters<typeof HttpsAgent>[0]);
    // tls.connect does not pass `noDelay` on to the TCP socket under the TLS one: set it once created.
    const createTlsConnection = (agent as unknown as { createConnection: (options: object, callback?: unknown) => Socket }).createConnection.bind(agent);
    (agent as unknown as { createConnection: (options: object, callback?: unknown) => Socket }).createConnection = (options, callback) =>
      createTlsConnection(options, callback).setNoDelay(true);
    const nodeName = agent.getName.bind(agent);
    agent.getName = (options) => `${nodeName(options)}:${contextId((options as ConnectionOptions | undefined)?.secureContext)}`;
    return agent;
  };
  // Compiled TLS settings live as long as their config: their pool key is computed once.
  const poolKeys = new WeakMap<object, string>();
  const poolKeyOf = (tls: Extract<UpstreamTls, { kind: 'tls' }>): string => {
    let key = poolKeys.get(tls);
    if (key === undefined)
      poolKeys.set(tls, (key = JSON.stringify([tls.sni ?? '', tls.alpn, tls.sanMatchers, tls.validationSecret ?? '', tls.trustedCa ?? ''])));
    return key;
  };
  return {
    plain,
    tlsFor(tls) {
      const key = poolKeyOf(tls);
      return recentEntry(pools, key, MAX_TLS_POOLS, newTlsAgent, (evicted) => evicted.destroy());
    },
    secureContexts: newSecureContextCache(),
    destroy() {
      plain.destroy();
      for (const agent of pools.values()) agent.destroy();
      pools.clear();
    },
  };
}
