import { createServer as createHttpServer, request, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newDataPlaneStats } from './data-plane-stats.js';
import type { HttpDecision } from './decisions/index.js';
import { forwardRequest } from './http-forwarder.js';
import { newUpstreamAgents, type UpstreamAgents } from './upstream-connector.js';

// An upstream closes an idle keep-alive connection when it likes (Node's servers after 5 s); a
// request written as that close crosses it fails unread. The forwarder sends such a request again
// on another connection when that is safe (no body; a safe method or an idempotency key), and
// never otherwise: a body the upstream may have read is not sent twice, a fresh connection that
// fails is the upstream's failure, and an upstream that always resets cannot make it loop.
const HOST = '127.0.0.1';

/**
 * A raw HTTP/1.1 upstream: it answers the first request of each connection and keeps it open; a
 * later request on the same connection is dropped unanswered, as an idle close crossing it would
 * (every request when `resetEvery` is set).
 */
interface CrossingCloseUpstream {
  readonly server: TcpServer;
  port: number;
  /** Each request's `<method> <path>` in arrival order. */
  readonly requests: string[];
  connections: number;
  resetEvery: boolean;
}

let upstream: CrossingCloseUpstream;
let agents: UpstreamAgents;
let downstream: Server;
let downstreamPort: number;

async function startCrossingCloseUpstream(): Promise<CrossingCloseUpstream> {
  const state: CrossingCloseUpstream = { server: createTcpServer(), port: 0, requests: [], connections: 0, resetEvery: false };
  state.server.on('connection', (socket: Socket) => {
    const connection = ++state.connections;
    let answered = 0;
    let pending = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const head = pending.slice(0, end);
        pending = pending.slice(end + 4);
        const [method, path] = head.split(' ', 2);
        state.requests.push(`${method} ${path}`);
        if (answered > 0 || state.resetEvery) {
          socket.destroy();
          return;
        }
        answered++;
        const body = JSON.stringify({ connection });
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${method === 'HEAD' ? '' : body}`);
      }
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, HOST, resolve));
  state.port = (state.server.address() as AddressInfo).port;
  return state;
}

function decisionFor(path: string): Extract<HttpDecision, { kind: 'forward' }> {
  const edits = { set: {}, append: {}, remove: [] };
  const cluster = 'inbound|8000||';
  return {
    kind: 'forward',
    route: { kind: 'cluster', virtualHost: 'v', route: 'r', cluster, path, host: 'app:8000', timeoutMs: 0, requestHeaders: edits, responseHeaders: edits },
    upstream: { kind: 'unknown-cluster', cluster },
    path,
    host: 'app:8000',
    headersToSet: {},
    headersToRemove: [],
    rbac: [],
    metadata: {},
  };
}

beforeAll(async () => {
  upstream = await startCrossingCloseUpstream();
  agents = newUpstreamAgents();
  const stats = newDataPlaneStats();
  downstream = createHttpServer((req, res) => {
    forwardRequest(req, res, {
      decision: decisionFor(req.url ?? '/'),
      target: { address: HOST, port: upstream.port, tls: { kind: 'plaintext' } },
      secrets: { certificates: new Map(), trustedCas: new Map() },
      downstreamTls: false,
      stats,
      agents,
    });
  });
  await new Promise<void>((resolve) => downstream.listen(0, HOST, resolve));
  downstreamPort = (downstream.address() as AddressInfo).port;
});

afterAll(async () => {
  agents?.destroy();
  downstream?.closeAllConnections();
  await new Promise<void>((resolve) => (downstream ? downstream.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (upstream ? upstream.server.close(() => resolve()) : resolve()));
});

/** One request through the forwarder: its status and body. */
function call(method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers, ...(options.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(options.body)) }) };
    const req = request({ host: HOST, port: downstreamPort, method, path, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The forwarder's pool holds one idle connection the upstream will drop the next request on. */
async function poolOneStaleConnection(): Promise<void> {
  const first = await call('GET', '/warm');
  expect(first.status).toBe(200);
}

const since = (mark: number): string[] => upstream.requests.slice(mark);

describe('a request that crosses an upstream closing an idle pooled connection', () => {
  test.each([
    ['GET', {}],
    ['HEAD', {}],
    ['DELETE', { 'idempotency-key': 'k-1' }],
  ])('%s %j is sent again on a new connection and succeeds', async (method, headers) => {
    await poolOneStaleConnection();
    const mark = upstream.requests.length;
    const connections = upstream.connections;
    const result = await call(method, '/replayed', { headers });
    expect(result.status).toBe(200);
    expect(since(mark)).toEqual([`${method} /replayed`, `${method} /replayed`]);
    expect(upstream.connections).toBe(connections + 1);
    if (method !== 'HEAD') expect(JSON.parse(result.body)).toEqual({ connection: upstream.connections });
  });

  test.each([
    ['POST', { body: 'transfer=100' }],
    ['PUT', { body: 'x' }],
    ['DELETE', {}],
    ['PATCH', {}],
  ])('%s %j is not sent twice: 503 reset', async (method, options) => {
    await poolOneStaleConnection();
    const mark = upstream.requests.length;
    const result = await call(method, '/once', options);
    expect(result.status).toBe(503);
    expect(result.body).toContain('reset reason: remote reset');
    expect(since(mark)).toEqual([`${method} /once`]);
  });

  test('a fresh connection that fails is not replayed, and an upstream that drops every request cannot make the forwarder loop', async () => {
    await poolOneStaleConnection();
    await poolOneStaleConnection();
    upstream.resetEvery = true;
    try {
      const mark = upstream.requests.length;
      // Two pooled connections in any order, then one fresh connection: at most three sends.
      const first = await call('GET', '/always-dropped');
      expect(first.status).toBe(503);
      expect(first.body).toContain('reset reason: connection failure');
      expect(since(mark).length).toBeLessThanOrEqual(3);
      expect(since(mark).at(-1)).toBe('GET /always-dropped');
      // The pool is empty now: one send on a fresh connection, not replayed.
      const next = since(mark).length;
      expect((await call('GET', '/always-dropped')).status).toBe(503);
      expect(since(mark).length - next).toBe(1);
    } finally {
      upstream.resetEvery = false;
    }
  });
});
