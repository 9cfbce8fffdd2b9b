import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newJwtAuthenticator, type JwtAuthenticatorOptions } from './jwt-authenticator.js';
import type { Authenticator } from './authenticator.js';

const AUDIENCE = 'mesh-ca';
const SA = 'spiffe://cluster.local/ns/apps/sa/web';

/** An attacker's view of the verdict cache: every input a caller controls, after a good token was cached. */
describe('OIDC token verdicts are cached without weakening verification', () => {
  let server: HttpServer;
  let issuer: string;
  let served: JWK[] = [];
  let fetches = 0;
  const keys = new Map<string, { privateKey: CryptoKey; jwk: JWK }>();

  beforeAll(async () => {
    for (const kid of ['k1', 'k2']) {
      const pair = await generateKeyPair('ES256');
      keys.set(kid, { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' } });
    }
    server = createServer((req, res) => {
      if (req.url !== '/keys') return void res.writeHead(404).end();
      fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: served }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const serve = (...kids: string[]): void => {
    served = kids.map((kid) => keys.get(kid)!.jwk);
  };
  const token = async (clock: FakeClock, claims: { kid?: string; audience?: string; expiresInS?: number; sub?: string } = {}): Promise<string> => {
    const kid = claims.kid ?? 'k1';
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(issuer)
      .setAudience(claims.audience ?? AUDIENCE)
      .setSubject(claims.sub ?? 'system:serviceaccount:apps:web')
      .setExpirationTime(Math.floor(clock.now() / 1000) + (claims.expiresInS ?? 60))
      .sign(keys.get(kid)!.privateKey);
  };
  const authenticator = (clock: FakeClock, extra: Partial<JwtAuthenticatorOptions> = {}): Authenticator =>
    newJwtAuthenticator({ rule: { issuer, audiences: [AUDIENCE], jwksUri: `${issuer}/keys` }, trustDomain: 'cluster.local', clock, ...extra });
  const identity = async (a: Authenticator, bearerToken: string): Promise<string> => {
    try {
      return (await a.authenticate({ bearerToken }))?.identities[0] ?? 'none';
    } catch {
      return 'refused';
    }
  };

  test('a cached token is refused from its exp on', async () => {
    serve('k1');
    const clock = new FakeClock();
    const a = authenticator(clock);
    const t = await token(clock, { expiresInS: 60 });
    expect(await identity(a, t)).toBe(SA);
    expect(await identity(a, t)).toBe(SA);
    clock.advance(59_999 - (clock.now() % 1000));
    expect(await identity(a, t)).toBe(SA);
    clock.advance(1);
    expect(await identity(a, t)).toBe('refused');
    expect(await identity(a, t)).toBe('refused');
  });

  test('a token for another audience, or a cached token re-labelled for one, is refused', async () => {
    serve('k1');
    const clock = new FakeClock();
    const a = authenticator(clock);
    const good = await token(clock);
    expect(await identity(a, good)).toBe(SA);
    expect(await identity(a, good)).toBe(SA);
    expect(await identity(a, await token(clock, { audience: 'another-service' }))).toBe('refused');
    // The cached token's header and signature with a payload naming another audience and account.
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, aud: 'another-service', sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    expect(await identity(a, `${header}.${forged}.${signature}`)).toBe('refused');
    // The cached token with its signature changed.
    const flipped = Buffer.from(signature, 'base64url');
    flipped[5]! ^= 1;
    expect(await identity(a, `${header}.${payload}.${flipped.toString('base64url')}`)).toBe('refused');
    expect(await identity(a, good)).toBe(SA);
  });

  test('a cached token is refused once its key leaves the key set (a token naming a new key reloads it)', async () => {
    serve('k1');
    const clock = new FakeClock();
    const a = authenticator(clock, { keySetCooldownMs: 0 });
    const old = await token(clock, { kid: 'k1' });
    expect(await identity(a, old)).toBe(SA);
    expect(await identity(a, old)).toBe(SA);
    serve('k2');
    const before = fetches;
    expect(await identity(a, await token(clock, { kid: 'k2' }))).toBe(SA);
    expect(fetches).toBe(before + 1);
    expect(await identity(a, old)).toBe('refused');
  });

  test('a cached token is refused once the key set is stale and no longer holds its key', async () => {
    serve('k1');
    const clock = new FakeClock();
    // A key set that is never fresh: every verification fetches it, so no verdict may outlive it.
    const a = authenticator(clock, { keySetMaxAgeMs: 0 });
    const old = await token(clock, { kid: 'k1' });
    expect(await identity(a, old)).toBe(SA);
    expect(await identity(a, old)).toBe(SA);
    serve('k2');
    expect(await identity(a, old)).toBe('refused');
  });
});
