/**
 * Test support: an HTTP authorization server on fastify, answering every method and path as a
 * test configures it, recording the check requests it receives. HTTPS with a client certificate
 * required when given TLS material (a meshed authorizer reached over mutual TLS).
 */
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { newAuthorizerState, type AuthorizerAnswer, type AuthorizerBehaviour, type TestAuthorizer } from './authorizer-behaviour.js';

export interface RecordedHttpCheck {
  readonly method: string;
  /** The path with its query, as received. */
  readonly path: string;
  /** Lower-case names, as received. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The client certificate's URI SAN, over mutual TLS. */
  readonly peerUri?: string;
}

export interface HttpAuthorizerOptions {
  /** A loopback address to bind (port chosen by the system). */
  readonly host: string;
  /** Serve HTTPS, asking for a client certificate issued by `ca`. */
  readonly tls?: { readonly key: string; readonly cert: string; readonly ca: string };
}

export type HttpAuthorizer = TestAuthorizer<RecordedHttpCheck>;

function send(reply: FastifyReply, answer: Exclude<AuthorizerAnswer, { kind: 'hang-up' }>): FastifyReply {
  switch (answer.kind) {
    case 'allow': {
      const headers: Record<string, string> = { ...answer.upstreamHeaders, ...answer.clientHeaders };
      if (answer.removeHeaders) headers['x-envoy-auth-headers-to-remove'] = answer.removeHeaders.join(', ');
      return reply.code(200).headers(headers).send('');
    }
    case 'deny':
      return reply
        .code(answer.status ?? 403)
        .headers({ ...answer.headers })
        .send(answer.body ?? '');
    default:
      return reply.code(answer.status ?? 503).send('authorizer error');
  }
}

function peerUriOf(socket: unknown): string | undefined {
  const tls = socket as Partial<TLSSocket>;
  const sans = tls.getPeerCertificate?.()?.subjectaltname ?? '';
  return sans
    .split(', ')
    .find((entry) => entry.startsWith('URI:'))
    ?.slice(4);
}

export async function startHttpAuthorizer(options: HttpAuthorizerOptions): Promise<HttpAuthorizer> {
  const state = newAuthorizerState<RecordedHttpCheck>();
  const tls = options.tls ? { https: { key: options.tls.key, cert: options.tls.cert, ca: options.tls.ca, requestCert: true, rejectUnauthorized: true } } : {};
  const app = Fastify({ forceCloseConnections: true, ...tls }) as unknown as FastifyInstance;
  // Every body as bytes, whatever its type (the check carries the client's body as it came).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  let calls = 0;
  app.all('/*', async (request, reply) => {
    calls++;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    const body = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '';
    const peerUri = options.tls ? peerUriOf(request.raw.socket) : undefined;
    state.received.push({ method: request.method, path: request.url, headers, body, ...(peerUri ? { peerUri } : {}) });
    const behaviour = state.behaviour;
    if (!(await state.delay(behaviour.delayMs))) return reply.hijack();
    if (behaviour.answer.kind === 'hang-up') {
      request.raw.socket.destroy();
      return reply.hijack();
    }
    return send(reply, behaviour.answer);
  });
  await app.listen({ host: options.host, port: 0 });
  const { address, port } = app.server.address() as AddressInfo;
  return {
    address,
    port,
    calls: () => calls,
    checks: () => state.received,
    behave: (behaviour: AuthorizerBehaviour) => void (state.behaviour = behaviour),
    reset() {
      calls = 0;
      state.received.length = 0;
      state.behaviour = { answer: { kind: 'allow' } };
    },
    async close() {
      state.closeDelays();
      await app.close();
    },
  };
}
