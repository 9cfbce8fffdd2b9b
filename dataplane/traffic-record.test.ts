import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { curl } from '../testing/curl.js';
import { newAdminServer, type AdminServer } from './admin-server.js';
import { replayFacts, verdictOf, type RecordedRequest } from './decisions/index.js';
import { startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';
import { DEFAULT_TRAFFIC_RECORD_LIMITS, newTrafficRecord, type TrafficRecordEntry, type TrafficRecordView } from './traffic-record.js';
import { trafficRecordLimitsOf } from './traffic-record-limits.js';

// The traffic record (issue 38 item 2), through real sockets: requests from the client sidecar
// (mutual TLS) and plain text straight to the server's pod, with tokens, headers a policy names
// and headers none does. The record keeps what the decisions read and never a token; replayed
// through the same decision functions, every recorded request gets the verdict it got live.
const SUBNET = 95;
const ISSUER = 'recorder@secure.mesh.io';
const selector = { matchLabels: { app: 'httpbin' } };
const policy = (kind: string, name: string, spec: object): object => ({
  apiVersion: 'security.mesh.io/v1beta1',
  kind,
  metadata: { name, namespace: 'bar' },
  spec: { selector, ...spec },
});

let mesh: TwoSidecars;
let admin: AdminServer;
let adminPort: number;
let token: (claims: object) => Promise<string>;
let forged: string;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] });
  const sign = (key: CryptoKey, claims: object): Promise<string> =>
    new SignJWT({ ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setSubject('alice').setExpirationTime('1h').sign(key);
  token = (claims) => sign(pair.privateKey, claims);
  forged = await sign(other.privateKey, { group: 'admins' });
  mesh = await startTwoSidecars({
    subnet: SUBNET,
    mode: 'PERMISSIVE',
    trafficRecord: DEFAULT_TRAFFIC_RECORD_LIMITS,
    serverPolicies: [
      policy('RequestAuthentication', 'jwt', { jwtRules: [{ issuer: ISSUER, jwks }] }),
      policy('AuthorizationPolicy', 'deny-eve', { action: 'DENY', rules: [{ when: [{ key: 'request.headers[x-user]', values: ['eve'] }] }] }),
      policy('AuthorizationPolicy', 'admin-needs-token', {
        action: 'DENY',
        rules: [{ from: [{ source: { notRequestPrincipals: [`${ISSUER}/*`] } }], to: [{ operation: { paths: ['/admin'] } }] }],
      }),
      policy('AuthorizationPolicy', 'deny-blocked', { action: 'DENY', rules: [{ when: [{ key: 'request.auth.claims[group]', values: ['blocked'] }] }] }),
    ],
  });
  admin = newAdminServer({
    state: mesh.serverState,
    stats: mesh.serverPlane.stats,
    isReady: () => true,
    addresses: () => new Map(),
    bootstrap: {},
    secrets: () => undefined,
    recentRequests: () => mesh.serverPlane.recentRequests(),
  });
  adminPort = await admin.listen(`127.${SUBNET}.1.2`, 0);
});

afterAll(async () => {
  await admin?.close();
  await mesh?.close();
});

const viaClient = (path: string, headers: Record<string, string> = {}): Promise<string> =>
  curl(['-x', mesh.proxyUrl, ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]), `http://httpbin.bar:8000${path}`]).then(
    (result) => result.code,
  );

async function served(): Promise<{ text: string; view: TrafficRecordView }> {
  const result = await curl([`http://127.${SUBNET}.1.2:${adminPort}/recent_requests`]);
  expect(result.code).toBe('200');
  return { text: result.body, view: JSON.parse(result.body) as TrafficRecordView };
}

const find = (view: TrafficRecordView, match: (entry: TrafficRecordEntry) => boolean): TrafficRecordEntry => {
  const entry = view.entries.find(match);
  if (!entry) throw new Error(`no recorded request matches in ${JSON.stringify(view.entries, null, 1)}`);
  return entry;
};

describe('the traffic record of a sidecar, through real sockets', () => {
  let view: TrafficRecordView;
  let text: string;
  let good: string;
  let blocked: string;

  beforeAll(async () => {
    good = await token({ group: 'ok' });
    blocked = await token({ group: 'blocked', email: 'alice@example.com' });
    const codes = [
      ...(await Promise.all([1, 2, 3].map(() => viaClient('/headers', { 'x-user': 'bob', 'x-session-secret': 's3cr3t-value' })))),
      await viaClient('/headers', { 'x-user': 'eve' }),
      (await curl([`http://127.${SUBNET}.1.2:8000/ip`])).code,
      await viaClient('/admin?x=1', { authorization: `Bearer ${good}` }),
      await viaClient(`/admin?access_token=${good}&x=2`),
      await viaClient('/admin', { authorization: `Bearer ${blocked}` }),
      await viaClient('/admin', { authorization: `Bearer ${forged}` }),
      // The replay's stand-in token, sent live: never taken as one.
      await viaClient('/admin', { authorization: 'Bearer recorded-token-0' }),
    ];
    expect(codes).toEqual(['200', '200', '200', '403', '200', '200', '200', '403', '401', '401']);
    ({ view, text } = await served());
  });

  test('the same request counts once, with its count; mutual TLS and plain text are told apart', () => {
    const bob = find(view, (entry) => entry.request.headers['x-user'] === 'bob');
    expect(bob).toMatchObject({
      listener: 'virtualInbound',
      direction: 'inbound',
      count: 3,
      connection: { destinationPort: 8000, transportProtocol: 'tls', peerUriSans: ['spiffe://cluster.local/ns/foo/sa/sleep'] },
      request: { method: 'GET', path: '/headers', headers: { 'x-user': 'bob' } },
      verdict: { outcome: 'forwarded' },
    });
    const plain = find(view, (entry) => entry.request.path === '/ip');
    expect(plain.connection.transportProtocol).toBe('raw_buffer');
    expect(plain.connection.peerUriSans).toBeUndefined();
    expect(plain.connection.sourceAddress).toBe('127.0.0.1');
    expect(view.recorded).toBe(10);
  });

  test('a denial names its policy and rule; a refused token keeps why', () => {
    expect(find(view, (entry) => entry.request.headers['x-user'] === 'eve').verdict).toEqual({
      outcome: 'respond',
      status: 403,
      by: 'rbac',
      policy: 'ns[bar]-policy[deny-eve]-rule[0]',
    });
    expect(find(view, (entry) => entry.tokens?.[0]?.claims['group'] === 'blocked').verdict.policy).toBe('ns[bar]-policy[deny-blocked]-rule[0]');
    const bad = view.entries.filter((entry) => entry.verdict.status === 401);
    expect(bad.map((entry) => entry.tokens?.[0]?.failure).sort()).toEqual(['malformed', 'verification-failed']);
  });

  test('no token, credential or header no policy names is kept: only claims policies read', () => {
    for (const secret of [good, blocked, forged, 's3cr3t-value', 'alice@example.com', 'curl/']) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/Bearer ey/);
    const withToken = find(view, (entry) => entry.request.path === '/admin?x=1');
    expect(withToken.tokens).toEqual([
      { header: 'authorization', prefix: 'Bearer ', claims: expect.objectContaining({ iss: ISSUER, sub: 'alice', group: 'ok' }), verified: true },
    ]);
    // A token in the query is kept by its claims, out of the path.
    expect(find(view, (entry) => entry.request.path === '/admin?x=2').tokens).toEqual([
      { param: 'access_token', claims: expect.objectContaining({ iss: ISSUER, group: 'ok' }), verified: true },
    ]);
  });

  test('replayed through the same decision functions, every recorded request gets the verdict it got live', async () => {
    const decisions = mesh.serverState.current().decisions;
    for (const entry of view.entries) {
      const { connection, request, tokens } = replayFacts(entry as RecordedRequest);
      const listener = decisions.listenerFor('inbound', connection.destinationAddress, connection.destinationPort);
      if (!listener) throw new Error('no listener');
      const chain = decisions.connection(listener, connection);
      if (chain.kind !== 'accept') throw new Error('connection refused');
      const decision = await chain.http(request, { connection, now: new Date(entry.lastSeen), random: 0, pick: 0, recordedTokens: tokens });
      expect({ path: entry.request.path, verdict: verdictOf(decision) }).toEqual({ path: entry.request.path, verdict: entry.verdict });
    }
  });
});

describe('the record keeps within its limits', () => {
  const request = (index: number): RecordedRequest => ({
    listener: 'virtualInbound',
    direction: 'inbound',
    connection: { destinationAddress: '10.0.0.1', destinationPort: 8000, sourceAddress: `10.1.${index >> 8}.${index & 255}`, transportProtocol: 'raw_buffer' },
    request: { method: 'GET', host: 'httpbin', path: `/items/${index}`, headers: {} },
    verdict: { outcome: 'forwarded' },
  });

  test('a flood of distinct requests stays under the byte and count limits, the most recent kept', () => {
    const record = newTrafficRecord({ ...DEFAULT_TRAFFIC_RECORD_LIMITS, maxEntries: 100_000 });
    for (let index = 0; index < 20_000; index++) record.add(request(index));
    const view = record.view();
    expect(view.bytes).toBeLessThanOrEqual(DEFAULT_TRAFFIC_RECORD_LIMITS.maxBytes);
    expect(view.recorded).toBe(20_000);
    expect(view.dropped + view.entries.length).toBe(20_000);
    expect(view.entries[0]?.request.path).toBe('/items/19999');
    const counted = newTrafficRecord({ ...DEFAULT_TRAFFIC_RECORD_LIMITS, maxEntries: 10 });
    for (let index = 0; index < 25; index++) counted.add(request(index));
    expect(counted.view().entries.map((entry) => entry.request.path)).toEqual(Array.from({ length: 10 }, (_, i) => `/items/${24 - i}`));
  });

  test('a request not seen for the age limit is dropped; a sighting keeps it', () => {
    const record = newTrafficRecord({ ...DEFAULT_TRAFFIC_RECORD_LIMITS, maxAgeMs: 60_000 });
    const start = Date.parse('2026-11-29T12:00:00Z');
    record.add(request(1), new Date(start));
    record.add(request(2), new Date(start + 10_000));
    record.add(request(1), new Date(start + 50_000));
    const later = record.view(new Date(start + 75_000));
    expect(later.entries.map((entry) => [entry.request.path, entry.count])).toEqual([['/items/1', 2]]);
  });

  test('sampling and an empty record', () => {
    let dice = 0;
    const sampled = newTrafficRecord({ ...DEFAULT_TRAFFIC_RECORD_LIMITS, sampling: 0.25 }, () => (dice++ % 4) / 4);
    expect(Array.from({ length: 8 }, () => sampled.sampled()).filter(Boolean)).toHaveLength(2);
    expect(newTrafficRecord({ ...DEFAULT_TRAFFIC_RECORD_LIMITS, maxEntries: 0 }).sampled()).toBe(false);
  });

  test('node metadata sets the limits; a bad value is named and left at the default', () => {
    const warnings: string[] = [];
    const limits = trafficRecordLimitsOf(
      { TRAFFIC_RECORD_ENTRIES: '500', TRAFFIC_RECORD_MAX_AGE: '10m', TRAFFIC_RECORD_SAMPLING: '1.5', TRAFFIC_RECORD_BYTES: 'lots' },
      (message) => warnings.push(message),
    );
    expect(limits).toEqual({ maxEntries: 500, maxAgeMs: 600_000, sampling: 1, maxBytes: DEFAULT_TRAFFIC_RECORD_LIMITS.maxBytes });
    expect(warnings).toEqual([
      `node metadata TRAFFIC_RECORD_BYTES=lots: expected a positive whole number of bytes; using ${DEFAULT_TRAFFIC_RECORD_LIMITS.maxBytes}`,
      'node metadata TRAFFIC_RECORD_SAMPLING=1.5: expected a share from 0 to 1; using 1',
    ]);
  });

  test('the admin API says when the record is off', async () => {
    const off = newAdminServer({
      state: mesh.serverState,
      stats: mesh.serverPlane.stats,
      isReady: () => true,
      addresses: () => new Map(),
      bootstrap: {},
      secrets: () => undefined,
    });
    const port = await off.listen(`127.${SUBNET}.1.2`, 0);
    try {
      const result = await curl([`http://127.${SUBNET}.1.2:${port}/recent_requests`]);
      expect([result.code, result.body]).toEqual(['404', 'the traffic record is off\n']);
    } finally {
      await off.close();
    }
  });
});
