import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import { newMetrics, newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { waitFor } from '../../testing/wait-for.js';
import { metricValue } from '../testing/test-support.js';
import { newJwksResolver, type JwksResolver } from './jwks-resolver.js';

let server: Server;
let base: string;
let keySet: string;
let rotated = false;
let release: (() => void) | undefined;

beforeAll(async () => {
  const key = async (): Promise<object> => ({ ...(await exportJWK((await generateKeyPair('RS256')).publicKey)), alg: 'RS256', kid: 'k' });
  const first = JSON.stringify({ keys: [await key()] });
  const second = JSON.stringify({ keys: [await key()] });
  keySet = first;
  server = createServer((req, res) => {
    const reply = (status: number, body: string): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    switch (req.url) {
      case '/jwks':
        return reply(200, rotated ? second : first);
      case '/.well-known/openid-configuration':
        return reply(200, JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }));
      case '/missing':
        return reply(404, '{}');
      case '/not-a-key-set':
        return reply(200, JSON.stringify({ hello: 'world' }));
      case '/bad-key':
        return reply(200, JSON.stringify({ keys: [{ kty: 'RSA', n: 'x' }] }));
      case '/slow':
        release = () => reply(200, first);
        return;
      default:
        return reply(404, '{}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  release?.();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function resolver(
  changes: { count: number },
  clock = new FakeClock(),
): { resolver: JwksResolver; metrics: ReturnType<typeof newMetrics<'pilot-discovery'>>; clock: FakeClock } {
  const metrics = newMetrics('pilot-discovery');
  return {
    resolver: newJwksResolver({
      refreshIntervalMs: 60_000,
      retryMs: 1000,
      maxRetryMs: 4000,
      timeoutMs: 300,
      onChange: () => changes.count++,
      clock,
      log: newNopLogger('model'),
      metrics,
    }),
    metrics,
    clock,
  };
}

describe('the JWKS resolver', () => {
  test('fetches, inlines, and refreshes a rotated key set with a push', async () => {
    const changes = { count: 0 };
    const { resolver: jwks, metrics, clock } = resolver(changes);
    const failClosed = jwks.keySetFor({ jwksUri: `${base}/jwks` });
    expect(JSON.parse(failClosed).keys[0].kid).toBe('mesh-fail-closed');
    await jwks.refresh(`${base}/jwks`);
    expect(jwks.keySetFor({ jwksUri: `${base}/jwks` })).toBe(keySet);
    expect(changes.count).toBe(1);
    expect(await metricValue(metrics, 'pilot_jwks_resolver_network_fetch_success_total')).toBeGreaterThanOrEqual(1);
    rotated = true;
    clock.advance(60_000);
    await jwks.refresh(`${base}/jwks`);
    expect(jwks.keySetFor({ jwksUri: `${base}/jwks` })).not.toBe(keySet);
    expect(changes.count).toBe(2);
    rotated = false;
    jwks.close();
  });

  test("the issuer's discovery document when no jwksUri is given; inline jwks as given", async () => {
    const { resolver: jwks } = resolver({ count: 0 });
    await jwks.refresh(`issuer:${base}`);
    expect(JSON.parse(jwks.keySetFor({ issuer: base })).keys).toHaveLength(1);
    expect(jwks.keySetFor({ jwks: '{"keys":[]}' })).toBe('{"keys":[]}');
    jwks.close();
  });

  test.each([
    ['a 404', '/missing'],
    ['an answer that is not a key set', '/not-a-key-set'],
    ['a key that cannot be imported', '/bad-key'],
    ['a timeout', '/slow'],
  ])('fails closed on %s and counts the failure', async (_name, path) => {
    const changes = { count: 0 };
    const { resolver: jwks, metrics } = resolver(changes);
    await jwks.refresh(`${base}${path}`);
    expect(JSON.parse(jwks.keySetFor({ jwksUri: `${base}${path}` })).keys[0].kid).toBe('mesh-fail-closed');
    expect(await metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total')).toBe(1);
    expect(changes.count).toBe(0);
    jwks.close();
  });

  test.each(['http://169.254.169.254/latest/meta-data', 'http://metadata.google.internal/jwks', 'http://[fe80::1]/jwks', 'file:///etc/passwd'])(
    'refuses %s without fetching it',
    async (uri) => {
      const { resolver: jwks, metrics } = resolver({ count: 0 });
      await jwks.refresh(uri);
      expect(await metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total')).toBe(1);
      expect(JSON.parse(jwks.keySetFor({ jwksUri: uri })).keys[0].kid).toBe('mesh-fail-closed');
      jwks.close();
    },
  );

  test('retries on a timer with backoff after failures: 1 s, then 2 s', async () => {
    const clock = new FakeClock();
    const { resolver: jwks, metrics } = resolver({ count: 0 }, clock);
    const failures = (): Promise<number> => metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total');
    await jwks.refresh(`${base}/missing`);
    clock.advance(999);
    expect(await failures()).toBe(1);
    clock.advance(1);
    await waitFor(async () => (await failures()) === 2, { description: 'the first retry' });
    clock.advance(2000);
    await waitFor(async () => (await failures()) === 3, { description: 'the second retry, 2 s later' });
    jwks.close();
  });
});
