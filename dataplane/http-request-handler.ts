import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Logger } from '../runtime/index.js';
import type { ConfigState } from './config-state.js';
import { arrivalOf, upstreamOf, type ConnectionContext, type ConnectionContexts } from './connection-context.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { DecisionInputs } from './decision-inputs.js';
import { httpExtAuthzCounters, type AcceptedChain, type AccessLogEntry, type HttpDecision, type RequestBodyReader } from './decisions/index.js';
import { forwardRequest, requestHeaderFacts, respond } from './http-forwarder.js';
import { parseProxyForm } from './proxy-form.js';
import { newRequestBodyBuffer, type RequestBodyBuffer } from './request-body.js';
import { isMeshMutualTls, type HttpExchange, type RequestTelemetry } from './request-telemetry.js';
import type { SecretSet } from './sds-subscriber.js';
import { MissingSecretError } from './tls-material.js';
import type { UpstreamAgents } from './upstream-connector.js';
import type { AccessLogWriter } from './access-log-writer.js';
import { connectionEntryFacts, forwardedDetails, hostPort, localReplyDetails } from './access-log-entry.js';
import { bodyBytesOf } from './counted-response.js';
import { errorMessage } from '../runtime/index.js';
import type { TrafficRecorder } from './traffic-recorder.js';

export interface HttpRequestHandlerOptions {
  state: ConfigState;
  contexts: ConnectionContexts;
  inputs: DecisionInputs;
  telemetry: RequestTelemetry;
  stats: DataPlaneStats;
  agents: UpstreamAgents;
  secrets: () => SecretSet;
  /** Where ORIGINAL_DST inbound traffic goes. */
  appAddress?: string;
  accessLogs: AccessLogWriter;
  /** Keeps the facts and verdict of recent requests (`/recent_requests`). */
  recorder?: TrafficRecorder;
  log: Logger;
}

/**
 * Serves one downstream HTTP request as the HTTP connection manager would: the filter chain's
 * decision (JWT, RBAC, ext_authz, route), then a local reply or the request forwarded upstream.
 */
export type HttpRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Where a request is headed, or the local reply when it names nowhere to go. */
type Destination = { context: ConnectionContext; host: string; path: string } | { status: number; body: string };

export function newHttpRequestHandler(options: HttpRequestHandlerOptions): HttpRequestHandler {
  const { state, contexts, inputs, telemetry, stats, log } = options;

  /** On the outbound capture port (HTTP proxy form) the request names its destination, as the original destination would. */
  const destinationOf = (req: IncomingMessage, context: ConnectionContext): Destination => {
    const path = req.url ?? '/';
    const host = req.headers.host ?? '';
    if (context.direction !== 'outbound') return { context, host, path };
    const target = parseProxyForm(path);
    if (!target) return { status: 400, body: 'outbound requests must use the absolute (proxy) form' };
    const listener = state.current().decisions.listenerFor('outbound', '0.0.0.0', target.port);
    if (!listener) return { status: 503, body: 'no listener for this destination' };
    return {
      context: { ...context, listener, facts: { ...context.facts, destinationAddress: '0.0.0.0', destinationPort: target.port } },
      host: target.host,
      path: target.path,
    };
  };

  /** The chain for a request: chosen again from the current config, so route and cluster updates apply to open connections. */
  const chainFor = (context: ConnectionContext): AcceptedChain | undefined => {
    const decision = state.current().decisions.connection(context.listener, context.facts);
    return decision.kind === 'accept' ? decision : undefined;
  };

  const countLocalReply = (decision: Extract<HttpDecision, { kind: 'respond' }>, exchange: HttpExchange): void => {
    stats.inc(`http.${decision.by}.downstream_rq_${decision.status}`);
    if (decision.by === 'rbac') stats.inc('http.rbac.denied');
    if (decision.by === 'jwt') stats.inc('http.jwt_authn.denied');
    if (decision.by === 'ext_authz') exchange.flag('UAEX');
    if (decision.by === 'router' && !decision.route) exchange.flag('NR');
  };

  /** Writes the chain's access logs when the request is recorded (response finished, or the client gone). */
  const accessLogged = (
    chain: AcceptedChain,
    context: ConnectionContext,
    res: ServerResponse,
    facts: { method: string; host: string; path: string; headers: Readonly<Record<string, string>>; protocol: string },
    exchange: HttpExchange,
  ): { decided(decision: HttpDecision): void; upstreamHost: string | undefined } => {
    const startTime = new Date();
    const started = performance.now();
    const state: { decided(decision: HttpDecision): void; upstreamHost: string | undefined; decision?: HttpDecision } = {
      upstreamHost: undefined,
      decided(decision) {
        state.decision = decision;
      },
    };
    const write = (): void => {
      const { decision, upstreamHost } = state;
      const { flags, requestBytes } = exchange.summary();
      const route = decision?.route;
      const responseCode = res.headersSent ? res.statusCode : 0;
      options.accessLogs.write(chain.accessLogs, {
        startTime,
        requestHeaders: {
          ...facts.headers,
          ':method': facts.method,
          ':path': facts.path,
          ':authority': facts.host,
          ':scheme': context.tls ? 'https' : 'http',
        },
        responseHeaders: res.getHeaders() as AccessLogEntry['responseHeaders'] & object,
        protocol: facts.protocol,
        responseCode,
        responseFlags: flags,
        ...(decision
          ? { responseCodeDetails: decision.kind === 'respond' ? localReplyDetails(decision) : forwardedDetails(flags) }
          : { responseCodeDetails: 'downstream_remote_disconnect' }),
        bytesReceived: requestBytes,
        bytesSent: bodyBytesOf(res),
        durationMs: performance.now() - started,
        ...(upstreamHost ? { upstreamHost } : {}),
        ...(decision?.kind === 'forward'
          ? { upstreamCluster: decision.upstream.cluster }
          : route?.kind === 'cluster'
            ? { upstreamCluster: route.cluster }
            : {}),
        ...(route && 'routeName' in route && route.routeName !== undefined ? { routeName: route.routeName } : {}),
        ...connectionEntryFacts(context, inputs.localUriSan()),
      });
    };
    // After the telemetry's own listeners (registered first), which add the DC flag.
    res.once('finish', write);
    res.once('close', () => {
      if (!res.writableFinished) write();
    });
    return state;
  };

  return async (req, res) => {
    const socketContext = contexts.ofRequest(req);
    if (req.httpVersionMajor === 2 && req.headers.host === undefined) {
      // HTTP/2 carries the host as :authority; the decisions read Host.
      const authority = (req as unknown as Http2ServerRequest).authority;
      if (authority) req.headers.host = authority;
    }
    if (!socketContext) return respond(res, 500, 'no connection context');
    stats.inc('http.downstream_rq_total');
    const destination = destinationOf(req, socketContext);
    if ('status' in destination) return respond(res, destination.status, destination.body);
    const { context, host, path } = destination;
    const chain = chainFor(context);
    if (!chain || chain.protocol !== 'http') {
      stats.inc('listener.no_filter_chain_match');
      req.socket.destroy();
      return;
    }
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 0 && !chain.acceptHttp10) {
      // Envoy's HTTP/1 codec refuses HTTP/1.0 unless the connection manager accepts it.
      return respond(res, 426, '', { connection: 'close' });
    }
    const received = requestHeaderFacts(req.rawHeaders);
    const protocol = req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`;
    const facts = {
      method: req.method ?? 'GET',
      host,
      path,
      headers: { ...received.headers, host },
      protocol,
      ...(received.repeatedHeaders ? { repeatedHeaders: received.repeatedHeaders } : {}),
    };
    const exchange = telemetry.beginHttp(facts.headers, host, res, arrivalOf(context));
    const logged = chain.accessLogs.length > 0 ? accessLogged(chain, context, res, facts, exchange) : undefined;
    // Made when a check asks for the body (most requests never read it here).
    let body: RequestBodyBuffer | undefined;
    const readBody: RequestBodyReader = (maxBytes) => (body ??= newRequestBodyBuffer(req, req.headers['content-length'])).read(maxBytes);
    let decision;
    try {
      decision = await chain.http(facts, inputs.requestContext(context, readBody));
    } catch (error) {
      log.error({ error: errorMessage(error) }, 'request decision failed');
      return respond(res, 500, 'internal error');
    }
    inputs.countExtAuthz(decision, httpExtAuthzCounters);
    if (logged) logged.decided(decision);
    options.recorder?.record(context, facts, decision);
    if (decision.kind === 'respond') {
      countLocalReply(decision, exchange);
      return respond(res, decision.status, decision.body, decision.headers);
    }
    if (decision.rbac.length > 0) stats.inc('http.rbac.allowed');
    const upstream = upstreamOf(decision.upstream, context, options.appAddress, decision.host);
    exchange.upstream(decision.upstream.cluster, isMeshMutualTls(decision.upstream));
    if ('status' in upstream) {
      exchange.flag(decision.upstream.kind === 'no-healthy-upstream' ? 'UH' : 'NC');
      return respond(res, upstream.status, upstream.body);
    }
    if (logged) logged.upstreamHost = hostPort(upstream.address, upstream.port);
    try {
      const prefix = body?.prefix();
      forwardRequest(req, res, {
        decision,
        edits: exchange.headerEdits(),
        target: upstream,
        secrets: options.secrets(),
        downstreamTls: context.tls,
        stats,
        agents: options.agents,
        observer: exchange,
        ...(prefix ? { bodyPrefix: prefix } : {}),
      });
    } catch (error) {
      if (error instanceof MissingSecretError) return (exchange.flag('UF'), respond(res, 503, `upstream connect error: ${error.message}`));
      throw error;
    }
  };
}
