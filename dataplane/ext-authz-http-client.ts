import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ExtAuthzFailure, ExtAuthzHttpAnswer, ExtAuthzHttpCall } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { upstreamTlsOptions, type UpstreamAgents, type UpstreamTarget } from './upstream-connector.js';

/** Envoy's limit on the answer's headers, as for any upstream response. */
const MAX_ANSWER_HEADER_BYTES = 60 * 1024;

function headersOf(response: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers[name] = value;
  return headers;
}

/** Why a request got no answer, in the words of the ext_authz failure. */
export function failureOf(error: NodeJS.ErrnoException, timedOut: boolean, timeoutMs: number): ExtAuthzFailure {
  if (timedOut) return { kind: 'failure', reason: 'timeout', detail: `no answer within ${timeoutMs} ms` };
  const refused = error.code === 'ECONNREFUSED' || error.code === 'EHOSTUNREACH' || error.code === 'ENOTFOUND';
  return { kind: 'failure', reason: refused ? 'connect-failure' : 'reset', detail: error.message };
}

/**
 * One check request to an HTTP authorization server's endpoint (HTTP/1.1, the cluster's TLS),
 * answered with its status, headers and body, or with why there was none (the timeout covers the
 * whole exchange, as Envoy's `server_uri.timeout`).
 */
export function callHttpAuthorizer(target: UpstreamTarget, call: ExtAuthzHttpCall, secrets: SecretSet, agents: UpstreamAgents): Promise<ExtAuthzHttpAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const settle = (answer: ExtAuthzHttpAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const tls = target.tls.kind === 'tls' ? upstreamTlsOptions(target.tls, secrets, agents.secureContexts) : undefined;
    const send = tls ? httpsRequest : httpRequest;
    const req = send({
      host: target.address,
      port: target.port,
      method: call.method,
      path: call.path,
      headers: call.headers,
      maxHeaderSize: MAX_ANSWER_HEADER_BYTES,
      agent: target.tls.kind === 'tls' ? agents.tlsFor(target.tls) : agents.plain,
      ...(tls ?? {}),
    });
    // A zero timeout waits for ever, as a route's.
    const timer =
      call.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            req.destroy(new Error('timeout'));
          }, call.timeoutMs)
        : undefined;
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => settle({ kind: 'response', status: response.statusCode ?? 502, headers: headersOf(response), body: Buffer.concat(chunks) }));
      response.on('error', (error: NodeJS.ErrnoException) => settle(failureOf(error, timedOut, call.timeoutMs)));
      response.on('aborted', () => settle(failureOf(new Error('the answer was cut short'), timedOut, call.timeoutMs)));
    });
    req.on('error', (error: NodeJS.ErrnoException) => settle(failureOf(error, timedOut, call.timeoutMs)));
    req.end(call.body.length > 0 ? Buffer.from(call.body) : undefined);
  });
}
