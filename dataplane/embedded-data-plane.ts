import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { ServiceDefinition } from '@grpc/grpc-js';
import type { Logger } from '../runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import type { ConfigState } from './config-state.js';
import { httpExtAuthzCounters, networkExtAuthzCounters, type AcceptedChain, type ConnectionFacts, type HttpDecision, type PeerCertificate, type RequestBodyReader, type RequestContext, type TcpDecision, type UpstreamDecision } from './decisions/index.js';
import { authorizationServiceOf, newExtAuthzTransport } from './ext-authz-transport.js';
import { newRequestBodyBuffer, type RequestBodyBuffer } from './request-body.js';
import { newDataPlaneStats, type DataPlaneStats } from './data-plane-stats.js';
import { forwardRequest, requestHeaderFacts, respond } from './http-forwarder.js';
import { newPeerChainVerifier } from './peer-verification.js';
import { sniffConnection } from './sniffed-socket.js';
import { parseProxyForm } from './proxy-form.js';
import { newMeshMetrics } from './mesh-metrics.js';
import { UNKNOWN_WORKLOAD, type WorkloadFacts } from './peer-metadata.js';
import { isMeshMutualTls, newRequestTelemetry, newServiceHostIndex, type ArrivalFacts } from './request-telemetry.js';
import { CountedHttp2ServerResponse, CountedServerResponse } from './counted-response.js';
import type { SecretSet } from './sds-subscriber.js';
import { leafUriSan, MissingSecretError, newSecureContextCache, peerCertificateFacts, tlsMaterialFor } from './tls-material.js';
import { connectUpstream, newUpstreamAgents, type UpstreamTarget } from './upstream-connector.js';
import { upstreamTarget } from './upstream-target.js';
import { errorMessage } from '../runtime/index.js';

/** Envoy's default limit on the headers of a request or a response. */
export const MAX_HEADER_BYTES = 60 * 1024;

export interface EmbeddedDataPlaneOptions {
  state: ConfigState;
  secrets: () => SecretSet;
  /** The workload's pod address: inbound capture and gateway listeners bind here. */
  podAddress: string;
  /** Container ports whose inbound traffic is captured on the pod address (sidecars). */
  inboundPorts?: readonly number[];
  /**
   * Also capture every port the `virtualInbound` chains match on, as they come and go (what
   * iptables capturing all inbound ports gives in a cluster).
   */
  captureInboundFromConfig?: boolean;
  /** The outbound capture port on the pod address, taking HTTP proxy-form requests (sidecars; 15001). */
  outboundPort?: number;
  /** Where ORIGINAL_DST inbound traffic goes: the app's private address (what iptables bypass gives in a cluster). */
  appAddress?: string;
  /** Gateways: bind every listener with `bind_to_port` on the pod address. */
  bindListeners?: boolean;
  log: Logger;
  /** How long the listener filters wait for the first bytes before deciding on what they have. */
  sniffTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** This proxy's workload and node id, for the request metrics and the peer-metadata exchange. */
  workload?: WorkloadFacts;
  nodeId?: string;
  /** The Envoy protos the process loaded: the ext_authz gRPC client's service definition (loaded on first use when absent). */
  protos?: EnvoyProtos;
}

export interface EmbeddedDataPlane {
  start(): Promise<void>;
  /** Bound addresses by listener key (`inbound:<port>`, `outbound`, or a listener name). */
  addresses(): ReadonlyMap<string, { address: string; port: number }>;
  readonly stats: DataPlaneStats;
  /** Stops accepting; in-flight requests finish (up to `graceMs`), then everything closes. */
  /**
   * Stops accepting (on inbound ports only with `inboundOnly`, as Envoy's
   * `/drain_listeners?inboundonly`), closes idle connections, and waits up to `graceMs` for the
   * open ones to finish.
   */
  drain(graceMs: number, options?: { inboundOnly?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

interface ConnectionContext {
  listener: string;
  facts: ConnectionFacts;
  direction: 'inbound' | 'outbound' | 'gateway';
  tls: boolean;
}

/**
 * The embedded data plane: real listeners on the pod address that take the daemon's listeners,
 * routes, clusters and endpoints and the agent's secrets, and serve traffic through the decision
 * functions, as Envoy would.
 */
export function newEmbeddedDataPlane(options: EmbeddedDataPlaneOptions): EmbeddedDataPlane {
  const { state, log } = options;
  const stats = newDataPlaneStats();
  const agents = newUpstreamAgents();
  const secureContext = newSecureContextCache();
  const verifyPeerChain = newPeerChainVerifier();
  const sniffTimeoutMs = options.sniffTimeoutMs ?? 5000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const servers = new Map<string, Server>();
  const bound = new Map<string, { address: string; port: number }>();
  const sockets = new Set<Socket>();
  // Kept on the socket itself: HTTP/2 hands requests a proxy of the session socket, which reads through to it.
  const CONTEXT = Symbol('mesh.connection-context');
  const contexts = {
    set: (socket: object, context: ConnectionContext): void => void ((socket as Record<symbol, unknown>)[CONTEXT] = context),
    get: (socket: object | null | undefined): ConnectionContext | undefined => (socket ? ((socket as Record<symbol, unknown>)[CONTEXT] as ConnectionContext | undefined) : undefined),
  };
  let pick = 0;
  let draining = false;
  const idleWaiters: (() => void)[] = [];
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
  };

  let uriCache: { chain: string; uri: string | undefined } | undefined;
  const localUriSan = (): string | undefined => {
    const certificate = options.secrets().certificates.get('default');
    if (!certificate) return undefined;
    if (uriCache?.chain !== certificate.certificateChain) uriCache = { chain: certificate.certificateChain, uri: leafUriSan(certificate.certificateChain) };
    return uriCache.uri;
  };

  const serviceHosts = newServiceHostIndex();
  const metrics = newMeshMetrics();
  stats.attach(metrics);
  const telemetry = newRequestTelemetry({ metrics, workload: options.workload ?? UNKNOWN_WORKLOAD, nodeId: options.nodeId ?? '', localUri: localUriSan, knownServices: () => serviceHosts(state.current().resources.clusters) });
  const arrivalOf = (context: ConnectionContext): ArrivalFacts => {
    const peerUri = context.facts.peerCertificate?.uriSans[0];
    return { direction: context.direction, mutualTls: context.tls && context.facts.peerCertificate !== undefined, ...(peerUri ? { peerUri } : {}) };
  };

  const target = (decision: UpstreamDecision, context: ConnectionContext, requestHost?: string): UpstreamTarget | { status: number; body: string } =>
    upstreamTarget(decision, { direction: context.direction, facts: context.facts, ...(options.appAddress !== undefined ? { appAddress: options.appAddress } : {}) }, requestHost);

  /** The chain for a request: chosen again from the current config, so route and cluster updates apply to open connections. */
  const chainFor = (context: ConnectionContext): AcceptedChain | undefined => {
    const decision = state.current().decisions.connection(context.listener, context.facts);
    return decision.kind === 'accept' ? decision : undefined;
  };

  let authorization: ServiceDefinition | undefined;
  const extAuthz = newExtAuthzTransport({
    upstream: (cluster) => state.current().decisions.upstream(cluster, pick++),
    secrets: options.secrets,
    agents,
    stats,
    authorizationService: () => (authorization ??= authorizationServiceOf(options.protos)),
  });

  const requestContext = (context: ConnectionContext, requestBody?: RequestBodyReader): RequestContext => {
    const uri = localUriSan();
    return { connection: context.facts, ...(uri ? { localUriSan: uri } : {}), now: new Date(), random: Math.random(), pick: pick++, extAuthz, ...(requestBody ? { requestBody } : {}) };
  };

  /** Envoy's counters of what the ext_authz filters did. */
  const countExtAuthz = (decision: HttpDecision | TcpDecision, counters: typeof httpExtAuthzCounters): void => {
    for (const verdict of decision.extAuthz ?? []) {
      for (const name of counters(verdict)) stats.inc(name);
      if (verdict.detail !== undefined) log.debug({ cluster: verdict.calledCluster, detail: verdict.detail }, 'ext_authz check failed');
    }
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const socketContext = req.httpVersionMajor === 2 ? sessionContexts.get((req as unknown as Http2ServerRequest).stream.session as object) : contexts.get(req.socket);
    if (req.httpVersionMajor === 2 && req.headers.host === undefined) {
      // HTTP/2 carries the host as :authority; the decisions read Host.
      const authority = (req as unknown as Http2ServerRequest).authority;
      if (authority) req.headers.host = authority;
    }
    if (!socketContext) return respond(res, 500, 'no connection context');
    stats.inc('http.downstream_rq_total');
    let context = socketContext;
    let path = req.url ?? '/';
    let host = req.headers.host ?? '';
    if (context.direction === 'outbound') {
      // HTTP proxy form: the destination comes from the request, as the original destination would.
      const target = parseProxyForm(path);
      if (!target) return respond(res, 400, 'outbound requests must use the absolute (proxy) form');
      const port = target.port;
      host = target.host;
      path = target.path;
      const listener = state.current().decisions.listenerFor('outbound', '0.0.0.0', port);
      if (!listener) return respond(res, 503, 'no listener for this destination');
      context = { ...context, listener, facts: { ...context.facts, destinationAddress: '0.0.0.0', destinationPort: port } };
    }
    const chain = chainFor(context);
    if (!chain || chain.protocol !== 'http') {
      stats.inc('listener.no_filter_chain_match');
      req.socket.destroy();
      return;
    }
    const received = requestHeaderFacts(req.rawHeaders);
    const protocol = req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`;
    const facts = { method: req.method ?? 'GET', host, path, headers: { ...received.headers, host }, protocol, ...(received.repeatedHeaders ? { repeatedHeaders: received.repeatedHeaders } : {}) };
    const exchange = telemetry.beginHttp(facts.headers, host, res, arrivalOf(context));
    // Made when a check asks for the body (most requests never read it here).
    let body: RequestBodyBuffer | undefined;
    const readBody: RequestBodyReader = (maxBytes) => (body ??= newRequestBodyBuffer(req, req.headers['content-length'])).read(maxBytes);
    let decision;
    try {
      decision = await chain.http(facts, requestContext(context, readBody));
    } catch (error) {
      log.error({ error: errorMessage(error) }, 'request decision failed');
      return respond(res, 500, 'internal error');
    }
    countExtAuthz(decision, httpExtAuthzCounters);
    if (decision.kind === 'respond') {
      stats.inc(`http.${decision.by}.downstream_rq_${decision.status}`);
      if (decision.by === 'rbac') stats.inc('http.rbac.denied');
      if (decision.by === 'jwt') stats.inc('http.jwt_authn.denied');
      if (decision.by === 'ext_authz') exchange.flag('UAEX');
      if (decision.by === 'router' && !decision.route) exchange.flag('NR');
      return respond(res, decision.status, decision.body, decision.headers);
    }
    if (decision.rbac.length > 0) stats.inc('http.rbac.allowed');
    const upstream = target(decision.upstream, context, decision.host);
    exchange.upstream(decision.upstream.cluster, isMeshMutualTls(decision.upstream));
    if ('status' in upstream) {
      exchange.flag(decision.upstream.kind === 'no-healthy-upstream' ? 'UH' : 'NC');
      return respond(res, upstream.status, upstream.body);
    }
    try {
      const prefix = body?.prefix();
      forwardRequest(req, res, { decision, edits: exchange.headerEdits(), target: upstream, secrets: options.secrets(), downstreamTls: context.tls, stats, agents, observer: exchange, ...(prefix ? { bodyPrefix: prefix } : {}) });
    } catch (error) {
      if (error instanceof MissingSecretError) return (exchange.flag('UF'), respond(res, 503, `upstream connect error: ${error.message}`));
      throw error;
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handleRequest(req, res).catch((error: Error) => {
      log.error({ error: error.message }, 'request failed');
      respond(res, 500, 'internal error');
    });
  };
  // Envoy's default max_request_headers_kb: 60 KiB of request headers (Node's own limit is 16 KiB).
  const httpServer = createHttpServer({ keepAlive: true, maxHeaderSize: MAX_HEADER_BYTES, ServerResponse: CountedServerResponse }, onRequest);
  // Envoy keeps an idle downstream connection for an hour (idle_timeout); Node's 5 s would make
  // every client pay a new (mutual TLS) handshake after a pause.
  httpServer.keepAliveTimeout = 3_600_000;
  // HTTP/2 (negotiated with ALPN h2, or prior knowledge in plain text) through the same request path.
  const http2Server = createHttp2Server({ Http2ServerResponse: CountedHttp2ServerResponse }, (req: Http2ServerRequest, res: Http2ServerResponse) => onRequest(req as unknown as IncomingMessage, res as unknown as ServerResponse));
  // An HTTP/2 request reaches its connection through its session, created while the socket is handed over.
  const sessionContexts = new WeakMap<object, ConnectionContext>();
  let handingOver: ConnectionContext | undefined;
  http2Server.on('session', (session) => {
    if (handingOver) sessionContexts.set(session, handingOver);
  });
  /** `resume`: the socket is paused (the HTTP/1 server reads through its events; an HTTP/2 session reads the handle itself). */
  const serveHttp = (socket: Duplex, protocols: readonly string[], resume = false): void => {
    if (protocols.includes('h2c') || protocols[0] === 'h2') {
      handingOver = contexts.get(socket);
      http2Server.emit('connection', socket);
      handingOver = undefined;
      return;
    }
    httpServer.emit('connection', socket);
    if (resume) socket.resume();
  };

  const handleTcp = (socket: Duplex, chain: AcceptedChain, context: ConnectionContext, raw: Socket): void => {
    chain.tcp(requestContext(context)).then(
      (decision) => proxyTcp(socket, decision, context, raw),
      (error: Error) => {
        log.error({ error: error.message }, 'connection decision failed');
        socket.destroy();
      },
    );
  };

  const proxyTcp = (socket: Duplex, decision: TcpDecision, context: ConnectionContext, raw: Socket): void => {
    countExtAuthz(decision, networkExtAuthzCounters);
    if (decision.kind === 'reset' && decision.by === 'ext_authz') {
      // Envoy closes the connection (no reset) when the authorization server denies it.
      socket.destroy();
      return;
    }
    if (decision.kind === 'reset') {
      stats.inc('tcp.rbac.denied');
      raw.resetAndDestroy();
      return;
    }
    if (socket.destroyed) return;
    const upstream = target(decision.upstream, context);
    if ('status' in upstream) {
      socket.destroy();
      return;
    }
    let remote: Socket;
    try {
      remote = connectUpstream(upstream, options.secrets(), connectTimeoutMs, agents.secureContexts);
    } catch {
      socket.destroy();
      return;
    }
    track(remote);
    const tcp = telemetry.beginTcp(arrivalOf(context), decision.upstream.cluster, isMeshMutualTls(decision.upstream));
    socket.on('data', (chunk: Buffer) => tcp.received(chunk.length));
    remote.on('data', (chunk: Buffer) => tcp.sent(chunk.length));
    remote.once('close', () => tcp.closed());
    socket.pipe(remote).pipe(socket);
    const destroyBoth = (): void => {
      socket.destroy();
      remote.destroy();
    };
    remote.on('error', destroyBoth);
    socket.on('error', destroyBoth);
  };

  const terminateTls = (socket: Duplex, chain: AcceptedChain, context: ConnectionContext, raw: Socket): void => {
    const tls = chain.downstreamTls;
    if (!tls) return;
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
      const secured: ConnectionContext = { ...context, tls: true, facts: { ...context.facts, ...(peer ? { peerCertificate: peer } : {}) } };
      if (chain.protocol === 'http') {
        contexts.set(secure, secured);
        serveHttp(secure, secure.alpnProtocol === 'h2' ? ['h2'] : []);
      } else handleTcp(secure, chain, secured, raw);
    });
  };

  const accept = async (socket: Socket, listener: string, direction: ConnectionContext['direction']): Promise<void> => {
    track(socket);
    socket.on('error', () => socket.destroy());
    stats.inc('downstream_cx_total');
    const local = socket.address() as AddressInfo;
    if (direction === 'outbound') {
      contexts.set(socket, { listener, direction, tls: false, facts: { destinationAddress: local.address, destinationPort: local.port, sourceAddress: socket.remoteAddress ?? '', ...(socket.remotePort !== undefined ? { sourcePort: socket.remotePort } : {}), transportProtocol: 'raw_buffer' } });
      serveHttp(socket, [], true);
      return;
    }
    const { result: sniffed, stream, isRaw } = await sniffConnection(socket, sniffTimeoutMs);
    const facts: ConnectionFacts = {
      destinationAddress: local.address,
      destinationPort: local.port,
      sourceAddress: socket.remoteAddress ?? '',
      ...(socket.remotePort !== undefined ? { sourcePort: socket.remotePort } : {}),
      transportProtocol: sniffed.kind === 'tls' ? 'tls' : 'raw_buffer',
      ...(sniffed.kind === 'tls' && sniffed.serverName ? { serverName: sniffed.serverName } : {}),
      applicationProtocols: sniffed.applicationProtocols,
    };
    const name = direction === 'inbound' ? (state.current().decisions.listenerFor('inbound', local.address, local.port) ?? 'virtualInbound') : listener;
    const decision = state.current().decisions.connection(name, facts);
    if (decision.kind === 'reset') {
      stats.inc('listener.no_filter_chain_match');
      socket.resetAndDestroy();
      return;
    }
    const context: ConnectionContext = { listener: name, direction, tls: false, facts };
    if (decision.downstreamTls) terminateTls(stream, decision, context, socket);
    else if (decision.protocol === 'http') {
      contexts.set(stream, context);
      serveHttp(stream, sniffed.applicationProtocols, isRaw);
    } else handleTcp(stream, decision, context, socket);
  };

  const listen = async (key: string, port: number, onSocket: (socket: Socket) => void): Promise<void> => {
    if (servers.has(key)) return;
    const server = createTcpServer({ pauseOnConnect: true, noDelay: true }, onSocket);
    servers.set(key, server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, options.podAddress, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    bound.set(key, { address: address.address, port: address.port });
  };

  const closeServer = (key: string): void => {
    servers.get(key)?.close();
    servers.delete(key);
    bound.delete(key);
  };

  /** The sockets the config asks for: gateway listeners with `bind_to_port`, captured inbound ports. */
  const wantedServers = (): Map<string, { port: number; onSocket: (socket: Socket) => void }> => {
    const wanted = new Map<string, { port: number; onSocket: (socket: Socket) => void }>();
    for (const listener of state.current().resources.listeners) {
      if (options.bindListeners) {
        const bindToPort = listener.bind_to_port === undefined || (typeof listener.bind_to_port === 'object' ? listener.bind_to_port.value : listener.bind_to_port);
        const port = listener.address?.socket_address?.port_value;
        if (bindToPort && port !== undefined) wanted.set(`listener:${listener.name}`, { port, onSocket: (socket) => void accept(socket, listener.name, 'gateway') });
      }
      if (options.captureInboundFromConfig && listener.name === 'virtualInbound') {
        for (const chain of listener.filter_chains ?? []) {
          const raw = chain.filter_chain_match?.destination_port;
          const port = typeof raw === 'object' ? raw.value : raw;
          if (port !== undefined && port !== listener.address?.socket_address?.port_value) {
            wanted.set(`inbound:${port}`, { port, onSocket: (socket) => void accept(socket, 'virtualInbound', 'inbound') });
          }
        }
      }
    }
    return wanted;
  };

  /** Binds what the config names; a listener that goes away stops accepting, its connections stay. */
  const syncListeners = async (): Promise<void> => {
    if (draining || (!options.bindListeners && !options.captureInboundFromConfig)) return;
    const fixed = new Set((options.inboundPorts ?? []).map((port) => `inbound:${port}`));
    const wanted = wantedServers();
    for (const key of [...servers.keys()]) {
      if ((key.startsWith('listener:') || key.startsWith('inbound:')) && !wanted.has(key) && !fixed.has(key)) closeServer(key);
    }
    for (const [key, { port, onSocket }] of wanted) {
      await listen(key, port, onSocket).catch((error: Error) => {
        log.error({ key, port, error: error.message }, 'cannot bind listener');
        servers.delete(key);
      });
    }
  };

  return {
    stats,
    async start() {
      for (const port of options.inboundPorts ?? []) {
        await listen(`inbound:${port}`, port, (socket) => void accept(socket, 'virtualInbound', 'inbound'));
      }
      if (options.outboundPort !== undefined) {
        await listen('outbound', options.outboundPort, (socket) => void accept(socket, 'virtualOutbound', 'outbound'));
      }
      state.onChange(() => {
        syncListeners().catch((error: Error) => log.error({ error: error.message }, 'listener update failed'));
      });
      await syncListeners();
    },
    addresses: () => bound,
    async drain(graceMs, drainOptions = {}) {
      draining = true;
      for (const key of [...servers.keys()]) if (!drainOptions.inboundOnly || key.startsWith('inbound:')) closeServer(key);
      httpServer.closeIdleConnections();
      if (sockets.size === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    async stop() {
      draining = true;
      for (const key of [...servers.keys()]) closeServer(key);
      for (const socket of sockets) socket.destroy();
      httpServer.closeAllConnections();
      agents.destroy();
      extAuthz.close();
    },
  };
}
