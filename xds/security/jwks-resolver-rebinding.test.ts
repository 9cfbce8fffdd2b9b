// DNS rebinding against BLOCKED_CIDRS_IN_JWKS_URIS: the attacker's name answers an allowed address
// to the pre-check and a blocked one to the connection. Real loopback key servers listen on
// 127.0.0.1 (blocked, the "internal" target) and 127.0.0.2 (allowed), on one port, and count every
// connection and request; only the injected `resolve` lies. These tests use the daemon's default
// GET (no injected `fetch`), the path that checks the address dialled.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import { newMetrics, parseCidrList, type Cidr } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newTestAuthority } from '../../ca/testing/test-authority.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { metricValue } from '../testing/test-support.js';
import { JwksFetchError, newJwksAddressCheck } from './jwks-address-check.js';
import { dialCheckedGet, MAX_JWKS_BODY_BYTES } from './jwks-dial.js';
import { newJwksResolver, type JwksResolver } from './jwks-resolver.js';

let keySet: string;
let tlsRootsPem: string;
/** What reached the servers: `<local address> <url>` per request, and connections per local address. */
const requests: string[] = [];
const connections: string[] = [];
type Server = ReturnType<typeof createHttpServer> | ReturnType<typeof createHttpsServer>;
const servers: Server[] = [];
let httpPort: number;
let httpsPort: number;

function handler(req: IncomingMessage, res: ServerResponse): void {
  requests.push(`${req.socket.localAddress ?? '?'} ${req.url ?? ''}`);
  if (req.url === '/redirect') return void res.writeHead(302, { location: '/jwks' }).end();
  if (req.url === '/endless') {
    // An answer that never ends: the daemon must stop reading it, not buffer it.
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = (): void => {
      while (res.write(chunk));
      res.once('drain', pump);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    return pump();
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(keySet);
}

/** Listens on 127.0.0.1 and 127.0.0.2 with one port. */
async function listenTwice(make: () => Server): Promise<number> {
  let port = 0;
  for (const host of ['127.0.0.1', '127.0.0.2']) {
    const server = make();
    server.on('connection', (socket: Socket) => connections.push(socket.localAddress ?? '?'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    port = (server.address() as AddressInfo).port;
    servers.push(server);
  }
  return port;
}

beforeAll(async () => {
  keySet = JSON.stringify({ keys: [{ ...(await exportJWK((await generateKeyPair('RS256')).publicKey)), alg: 'RS256', kid: 'k' }] });
  const authority = await newTestAuthority('web');
  tlsRootsPem = authority.rootPem;
  // The serving certificate names DNS:localhost (and IP:127.0.0.1).
  const serving = authority.loopbackServer();
  httpPort = await listenTwice(() => createHttpServer(handler));
  httpsPort = await listenTwice(() => createHttpsServer({ key: serving.keyPem, cert: serving.certPem }, handler));
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function cidrs(text: string): readonly Cidr[] {
  const list = parseCidrList(text);
  if (!list.ok) throw new Error(`bad CIDR ${list.entry}`);
  return list.cidrs;
}

/** A resolver that answers `first` once (the pre-check), then `later` to every call (the connection). */
function rebinding(first: string[], later: string[]): { resolve: (host: string) => Promise<string[]>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      return asked.length === 1 ? first : later;
    },
  };
}

interface Harness {
  readonly jwks: JwksResolver;
  readonly log: LogEntry[];
  readonly failures: () => Promise<number>;
}

function harness(blocked: string, resolve: (host: string) => Promise<string[]>): Harness {
  const metrics = newMetrics('pilot-discovery');
  const log: LogEntry[] = [];
  const jwks = newJwksResolver({
    refreshIntervalMs: 60_000,
    retryMs: 1000,
    timeoutMs: 2000,
    onChange: () => undefined,
    clock: new FakeClock(),
    log: newRecordingLogger(log),
    metrics,
    blockedCidrs: cidrs(blocked),
    resolve,
  });
  return { jwks, log, failures: () => metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total') };
}

/** Runs `body` and returns the requests and connections that reached the servers meanwhile. */
async function reached(body: () => Promise<void>): Promise<{ requests: string[]; connections: string[] }> {
  const [r, c] = [requests.length, connections.length];
  await body();
  return { requests: requests.slice(r), connections: connections.slice(c) };
}

const failedClosed = (jwks: JwksResolver, uri: string): boolean => JSON.parse(jwks.keySetFor({ jwksUri: uri })).keys[0].kid === 'mesh-fail-closed';

describe('a rebinding name, fetched by the daemon (http)', () => {
  test('allowed to the pre-check, 127.0.0.1 to the connection: nothing reaches any server, the refusal is logged and counted', async () => {
    const dns = rebinding(['127.0.0.2'], ['127.0.0.1']);
    const { jwks, log, failures } = harness('127.0.0.1/32', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/jwks`;
    expect(await reached(() => jwks.refresh(uri))).toEqual({ requests: [], connections: [] });
    // The pre-check and the connection's lookup, both through the injected resolve.
    expect(dns.asked).toEqual(['keys.rebind.test', 'keys.rebind.test']);
    expect(failedClosed(jwks, uri)).toBe(true);
    expect(await failures()).toBe(1);
    const warning = log.find((entry) => entry.level === 'warn');
    expect(warning?.fields).toMatchObject({ uri, address: '127.0.0.1', cidr: '127.0.0.1/32' });
    expect(warning?.fields['error']).toBe(`"${uri}": 127.0.0.1 is in 127.0.0.1/32 of BLOCKED_CIDRS_IN_JWKS_URIS`);
    jwks.close();
  });

  test('the connection is refused when ANY of its answers is blocked, even with an allowed one first', async () => {
    const dns = rebinding(['127.0.0.2'], ['127.0.0.2', '127.0.0.1']);
    const { jwks, log, failures } = harness('127.0.0.1/32', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/jwks`;
    expect(await reached(() => jwks.refresh(uri))).toEqual({ requests: [], connections: [] });
    expect(await failures()).toBe(1);
    expect(log.find((entry) => entry.level === 'warn')?.fields).toMatchObject({ uri, address: '127.0.0.1', cidr: '127.0.0.1/32' });
    jwks.close();
  });

  test('a link-local answer at connect time is refused as the pre-check refuses it', async () => {
    const dns = rebinding(['127.0.0.2'], ['169.254.169.254']);
    const { jwks, log, failures } = harness('', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/jwks`;
    expect(await reached(() => jwks.refresh(uri))).toEqual({ requests: [], connections: [] });
    expect(await failures()).toBe(1);
    expect(log.find((entry) => entry.level === 'warn')?.fields['error']).toBe(`"${uri}": 169.254.169.254 is a link-local or metadata address`);
    jwks.close();
  });

  test('without rebinding (127.0.0.2 both times) the allowed server is fetched once and the key set inlined', async () => {
    const dns = rebinding(['127.0.0.2'], ['127.0.0.2']);
    const { jwks, failures } = harness('127.0.0.1/32', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/jwks`;
    expect(await reached(() => jwks.refresh(uri))).toEqual({ requests: ['127.0.0.2 /jwks'], connections: ['127.0.0.2'] });
    expect(dns.asked).toHaveLength(2);
    expect(jwks.keySetFor({ jwksUri: uri })).toBe(keySet);
    expect(await failures()).toBe(0);
    jwks.close();
  });

  test('an answer larger than MAX_JWKS_BODY_BYTES is a failed fetch, its connection closed', async () => {
    const dns = rebinding(['127.0.0.2'], ['127.0.0.2']);
    const { jwks, log, failures } = harness('', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/endless`;
    await jwks.refresh(uri);
    expect(await failures()).toBe(1);
    expect(log.find((entry) => entry.level === 'warn')?.fields['error']).toBe(`GET ${uri}: the answer is larger than ${MAX_JWKS_BODY_BYTES} bytes`);
    expect(failedClosed(jwks, uri)).toBe(true);
    jwks.close();
  });

  test('a 3xx is a failed fetch, never followed', async () => {
    const dns = rebinding(['127.0.0.2'], ['127.0.0.2']);
    const { jwks, log, failures } = harness('', dns.resolve);
    const uri = `http://keys.rebind.test:${httpPort}/redirect`;
    expect((await reached(() => jwks.refresh(uri))).requests).toEqual(['127.0.0.2 /redirect']);
    expect(await failures()).toBe(1);
    expect(log.find((entry) => entry.level === 'warn')?.fields['error']).toBe(`GET ${uri}: status 302, redirects are not followed`);
    jwks.close();
  });
});

describe('the checked dial over https', () => {
  const get = (blocked: string, answer: string[]) => dialCheckedGet({ resolve: async () => answer, check: newJwksAddressCheck(cidrs(blocked)), tlsRootsPem });

  test('a blocked connect-time answer: no TLS connection, the refusal names the address and the range', async () => {
    const uri = `https://localhost:${httpsPort}/jwks`;
    let error: unknown;
    const seen = await reached(async () => {
      error = await get('127.0.0.1/32', ['127.0.0.1'])(new URL(uri), uri, 2000).catch((caught: unknown) => caught);
    });
    expect(seen).toEqual({ requests: [], connections: [] });
    expect(error).toBeInstanceOf(JwksFetchError);
    expect((error as JwksFetchError).fields).toEqual({ uri, address: '127.0.0.1', cidr: '127.0.0.1/32' });
  });

  test('an allowed answer is dialled, and the certificate is still verified against the hostname', async () => {
    const uri = `https://localhost:${httpsPort}/jwks`;
    let answer: unknown;
    const seen = await reached(async () => {
      answer = await get('127.0.0.1/32', ['127.0.0.2'])(new URL(uri), uri, 2000);
    });
    expect(seen).toEqual({ requests: ['127.0.0.2 /jwks'], connections: ['127.0.0.2'] });
    expect(answer).toEqual({ status: 200, body: keySet });
  });

  test('a name the certificate does not hold fails TLS, though its address is allowed', async () => {
    const uri = `https://keys.rebind.test:${httpsPort}/jwks`;
    const error = await get('127.0.0.1/32', ['127.0.0.2'])(new URL(uri), uri, 2000).catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});
