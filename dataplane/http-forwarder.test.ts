import { constants } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newTestAuthority, type TestAuthority } from '../ca/testing/test-authority.js';
import { waitFor } from '../testing/wait-for.js';
import { newDataPlaneStats } from './data-plane-stats.js';
import type { HttpDecision, UpstreamTls } from './decisions/index.js';
import { forwardRequest } from './http-forwarder.js';
import type { SecretSet } from './sds-subscriber.js';
import { newUpstreamAgents, type UpstreamAgents } from './upstream-connector.js';

// The forwarder's pooled mutual TLS connections to upstream peers, against an attacker who would
// profit from a connection reused past what it was verified for: each response is attributed to
// the peer that sent it, a rotated client certificate or trust bundle gets new connections.
const HOST = '127.0.0.1';
const MESH_TLS: UpstreamTls = {
  kind: 'tls',
  alpn: [],
  certificateSecrets: ['default'],
  inlineCertificates: [],
  validationSecret: 'ROOTCA',
  verifySubjectAltName: undefined,
  sanMatchers: [],
};
const identity = (name: string): string => `spiffe://cluster.local/ns/bar/sa/${name}`;

interface Upstream {
  readonly server: TlsServer;
  port: number;
  connections: number;
  /** Responses closed before they finished (the downstream went away). */
  aborted: number;
  /** Connections that resumed an earlier TLS session. */
  resumed: number;
}

let mesh: TestAuthority;
let otherRoot: TestAuthority;
const upstreams = new Map<string, Upstream>();
let agents: UpstreamAgents;
let secrets: SecretSet;
let downstream: Server;
let downstreamPort: number;
/** What the forwarder's observer saw per request id: the upstream certificate's URI SAN. */
const observed = new Map<string, string | undefined>();

function secretsOf(authority: TestAuthority, name: string, trusted: TestAuthority = authority): SecretSet {
  const { key, certPem } = authority.workload(identity(name));
  return {
    certificates: new Map([['default', { certificateChain: certPem, privateKey: key.export({ format: 'pem', type: 'pkcs8' }).toString() }]]),
    trustedCas: new Map([['ROOTCA', trusted.rootPem]]),
  };
}

/** An upstream peer with its own workload identity, requiring the mesh's client certificates; it answers with both identities. */
async function startUpstream(name: string, options: { ticketsAndOneRequestPerConnection?: boolean } = {}): Promise<Upstream> {
  const own = secretsOf(mesh, name).certificates.get('default');
  // No session tickets, as the mesh's sidecars serve: every connection is a full handshake. Other
  // servers (an Envoy, an external service) issue them.
  const tickets = options.ticketsAndOneRequestPerConnection === true;
  const tls = {
    key: own?.privateKey,
    cert: own?.certificateChain,
    ca: mesh.rootPem,
    requestCert: true,
    rejectUnauthorized: true,
    ...(tickets ? {} : { secureOptions: constants.SSL_OP_NO_TICKET }),
  };
  const server = createTlsServer(tls, (req, res) => {
    const client = (req.socket as TLSSocket).getPeerCertificate().subjectaltname ?? '';
    if (req.url === '/drip') {
      // Headers and a first chunk, then nothing until the peer goes away.
      res.on('close', () => void (res.writableFinished || upstream.aborted++));
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first chunk\n');
      return;
    }
    const body = JSON.stringify({ server: name, client });
    if (tickets) res.setHeader('connection', 'close');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.keepAliveTimeout = 60_000;
  const upstream: Upstream = { server, port: 0, connections: 0, aborted: 0, resumed: 0 };
  server.on('secureConnection', (socket: TLSSocket) => {
    upstream.connections++;
    if (socket.isSessionReused()) upstream.resumed++;
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  upstream.port = (server.address() as AddressInfo).port;
  return upstream;
}

function decisionFor(path: string): Extract<HttpDecision, { kind: 'forward' }> {
  const edits = { set: {}, append: {}, remove: [] };
  return {
    kind: 'forward',
    route: {
      kind: 'cluster',
      virtualHost: 'v',
      route: 'r',
      cluster: 'outbound|8000||peer.bar.svc.cluster.local',
      path,
      host: 'peer.bar:8000',
      timeoutMs: 0,
      requestHeaders: edits,
      responseHeaders: edits,
    },
    upstream: { kind: 'unknown-cluster', cluster: 'outbound|8000||peer.bar.svc.cluster.local' },
    path,
    host: 'peer.bar:8000',
    headersToSet: {},
    headersToRemove: [],
    rbac: [],
    metadata: {},
  };
}

beforeAll(async () => {
  mesh = await newTestAuthority('cluster.local');
  otherRoot = await newTestAuthority('cluster.local');
  for (const name of ['one', 'two']) upstreams.set(name, await startUpstream(name));
  upstreams.set('tickets', await startUpstream('tickets', { ticketsAndOneRequestPerConnection: true }));
  agents = newUpstreamAgents();
  secrets = secretsOf(mesh, 'sleep');
  const stats = newDataPlaneStats();
  // A client sidecar's outbound side, reduced to the forwarder: `x-peer` names the upstream.
  downstream = createServer((req, res) => {
    const upstream = upstreams.get(String(req.headers['x-peer'])) as Upstream;
    const id = String(req.headers['x-id']);
    const observer = {
      response: (_headers: unknown, peerUri: string | undefined) => void observed.set(id, peerUri),
      flag: () => undefined,
      requestBytes: () => undefined,
    };
    forwardRequest(req, res, {
      decision: decisionFor(req.url ?? '/'),
      target: { address: HOST, port: upstream.port, tls: MESH_TLS },
      secrets,
      downstreamTls: false,
      stats,
      agents,
      observer,
    });
  });
  await new Promise<void>((resolve) => downstream.listen(0, HOST, resolve));
  downstreamPort = (downstream.address() as AddressInfo).port;
});

afterAll(async () => {
  agents?.destroy();
  for (const server of [downstream, ...[...upstreams.values()].map((upstream) => upstream.server)]) {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
});

let ids = 0;
/** One request through the forwarder to `peer`: its status, body and the id the observer filed it under. */
function call(peer: string, path = '/'): Promise<{ status: number; body: string; id: string }> {
  const id = String(++ids);
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port: downstreamPort, path, headers: { 'x-peer': peer, 'x-id': id } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, id }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('pooled mutual TLS connections to upstream peers', () => {
  test('each response is attributed to the peer that sent it, over reused connections to two peers', async () => {
    const before = upstreams.get('one')?.connections ?? 0;
    const results = [];
    for (let round = 0; round < 5; round++) {
      results.push(await call('one'), await call('two'));
      results.push(...(await Promise.all([call('two'), call('one'), call('two'), call('one')])));
    }
    for (const { status, body, id } of results) {
      expect(status).toBe(200);
      const { server, client } = JSON.parse(body) as { server: string; client: string };
      expect(observed.get(id)).toBe(identity(server));
      expect(client).toBe(`URI:${identity('sleep')}`);
    }
    // Connections were reused: far fewer than the 15 requests each peer got.
    expect((upstreams.get('one')?.connections ?? 0) - before).toBeLessThanOrEqual(3);
  });

  test('an upstream that issues session tickets: every connection is a full handshake, its certificate checked and its identity known', async () => {
    const before = upstreams.get('tickets')?.connections ?? 0;
    for (let i = 0; i < 3; i++) {
      const { status, body, id } = await call('tickets');
      expect(status).toBe(200);
      expect(JSON.parse(body)).toMatchObject({ server: 'tickets' });
      // A resumed session shows no certificate: the SAN rules would not be checked and the peer's identity would be unknown.
      expect(observed.get(id)).toBe(identity('tickets'));
    }
    expect(upstreams.get('tickets')?.connections).toBe(before + 3);
    expect(upstreams.get('tickets')?.resumed).toBe(0);
  });

  test('a rotated client certificate gets a new connection: the upstream sees the new identity, never the old pooled one', async () => {
    expect(JSON.parse((await call('one')).body)).toMatchObject({ client: `URI:${identity('sleep')}` });
    const before = upstreams.get('one')?.connections ?? 0;
    secrets = secretsOf(mesh, 'sleep-v2');
    for (let i = 0; i < 3; i++) expect(JSON.parse((await call('one')).body)).toMatchObject({ server: 'one', client: `URI:${identity('sleep-v2')}` });
    expect(upstreams.get('one')?.connections).toBe(before + 1);
  });

  test('a trust bundle that no longer holds the upstream root is not bypassed by a connection pooled under the old one', async () => {
    secrets = secretsOf(mesh, 'sleep');
    expect((await call('two')).status).toBe(200);
    // Same client certificate, but only another root trusted now: the peer's chain must be refused.
    const { certificates } = secrets;
    secrets = { certificates, trustedCas: new Map([['ROOTCA', otherRoot.rootPem]]) };
    const refused = await call('two');
    expect(refused.status).toBe(503);
    expect(refused.body).toMatch(/upstream connect error/);
    secrets = secretsOf(mesh, 'sleep');
    expect((await call('two')).status).toBe(200);
  });

  test('a downstream that goes away mid-body resets the upstream response', async () => {
    const upstream = upstreams.get('one') as Upstream;
    const before = upstream.aborted;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: HOST, port: downstreamPort, path: '/drip', headers: { 'x-peer': 'one', 'x-id': 'drip' } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
      req.end();
    });
    await waitFor(() => upstream.aborted > before, { description: 'the upstream response closed before it finished' });
  });
});
