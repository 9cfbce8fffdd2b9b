import { beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import type { HttpRequestFacts } from './facts.js';
import { compileJwtAuthn, type JwtAuthenticationConfig } from './jwt-authn.js';

const ISSUER = 'testing@secure.mesh.io';
const NOW = new Date('2026-11-22T12:00:00Z');
const nowSeconds = NOW.getTime() / 1000;

let privateKey: CryptoKey;
let otherKey: CryptoKey;
let run: ReturnType<typeof compileJwtAuthn>;

async function token(claims: JWTPayload, key: CryptoKey = privateKey): Promise<string> {
  return new SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).sign(key);
}

const request = (headers: Record<string, string> = {}, path = '/ip'): HttpRequestFacts => ({ method: 'GET', host: 'gw', path, headers });

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  otherKey = (await generateKeyPair('RS256')).privateKey;
  const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
  // The shape the daemon generates for one issuer (XDS-FACTS §3).
  const config: JwtAuthenticationConfig = {
    providers: { 'origins-0': { issuer: ISSUER, local_jwks: { inline_string: JSON.stringify(jwks) }, payload_in_metadata: 'payload' } },
    rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } } }],
    bypass_cors_preflight: true,
  };
  run = compileJwtAuthn(config);
});

const bearer = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` });

describe('jwt_authn verdicts (seed 1 JWT table)', () => {
  test('no token passes, with no payload', async () => {
    expect(await run(request(), NOW)).toEqual({ kind: 'allow', metadata: {}, headersToSet: {}, headersToRemove: [] });
  });

  test('an invalid token is 401; a token signed by another key is 401', async () => {
    expect(await run(request(bearer('not.a.token')), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect(await run(request(bearer(await token({ exp: nowSeconds + 600 }, otherKey))), NOW)).toMatchObject({
      kind: 'deny',
      status: 401,
      failure: 'verification-failed',
    });
  });

  test('junk after the prefix is a token that fails, not a missing one (found by fuzzing; Envoy extracts the first base64url run)', async () => {
    expect(await run(request(bearer(',..')), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect(await run(request(bearer(`,${await token({ exp: nowSeconds + 600 })}`)), NOW)).toMatchObject({ kind: 'allow' });
    expect(await run(request(bearer('  ')), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect(await run(request({ authorization: 'Bearer ' }), NOW)).toMatchObject({ kind: 'allow', metadata: {} });
  });

  test('a valid token passes, its payload kept for RBAC and the header removed', async () => {
    const verdict = await run(request(bearer(await token({ exp: nowSeconds + 600 }))), NOW);
    expect(verdict).toMatchObject({ kind: 'allow', headersToRemove: ['authorization'] });
    expect(verdict.kind === 'allow' && verdict.metadata['payload']?.sub).toBe('alice');
  });

  test('60 s of clock skew on exp and nbf', async () => {
    const expired = await token({ exp: nowSeconds });
    expect((await run(request(bearer(expired)), new Date(NOW.getTime() + 59_000))).kind).toBe('allow');
    expect(await run(request(bearer(expired)), new Date(NOW.getTime() + 61_000))).toMatchObject({ kind: 'deny', status: 401, failure: 'expired' });
    const notYet = await token({ nbf: nowSeconds, exp: nowSeconds + 3600 });
    expect((await run(request(bearer(notYet)), new Date(NOW.getTime() - 59_000))).kind).toBe('allow');
    expect(await run(request(bearer(notYet)), new Date(NOW.getTime() - 61_000))).toMatchObject({ kind: 'deny', status: 401, failure: 'not-yet-valid' });
  });

  test('the access_token query parameter is read by default; CORS preflight bypasses', async () => {
    expect(await run(request({}, '/ip?access_token=garbage'), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect(
      (await run({ method: 'OPTIONS', host: 'gw', path: '/ip', headers: { origin: 'x', 'access-control-request-method': 'GET', ...bearer('bad') } }, NOW)).kind,
    ).toBe('allow');
  });
});

describe('jwt_authn provider options', () => {
  test('a wrong audience is 403; custom header locations and claim headers', async () => {
    const jwks = { keys: [{ ...(await exportJWK((await generateKeyPair('ES256')).publicKey)), kid: 'x' }] };
    const pair = await generateKeyPair('ES256');
    const keys = { keys: [...jwks.keys, { ...(await exportJWK(pair.publicKey)), kid: 'e1', alg: 'ES256' }] };
    const custom = compileJwtAuthn({
      providers: {
        'origins-0': {
          issuer: ISSUER,
          audiences: ['bookstore'],
          local_jwks: { inline_string: JSON.stringify(keys) },
          from_headers: [{ name: 'x-jwt', value_prefix: '' }],
          forward: true,
          claim_to_headers: [{ header_name: 'x-user', claim_name: 'sub' }],
          payload_in_metadata: 'payload',
        },
      },
      rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } } }],
    });
    const sign = (aud: string): Promise<string> =>
      new SignJWT({ sub: 'bob', aud })
        .setProtectedHeader({ alg: 'ES256', kid: 'e1' })
        .setIssuer(ISSUER)
        .setExpirationTime(nowSeconds + 60)
        .sign(pair.privateKey);
    expect(await custom(request({ 'x-jwt': await sign('elsewhere') }), NOW)).toMatchObject({ kind: 'deny', status: 403, failure: 'audience-not-allowed' });
    expect(await custom(request({ 'x-jwt': await sign('bookstore') }), NOW)).toMatchObject({
      kind: 'allow',
      headersToSet: { 'x-user': 'bob' },
      headersToRemove: [],
    });
    // The Authorization header is not a location of this provider: ignored, so the request passes.
    expect((await custom(request(bearer('garbage')), NOW)).kind).toBe('allow');
  });
});

describe('key sets with several keys and requests with several tokens', () => {
  let keys: CryptoKey[];
  let several: ReturnType<typeof compileJwtAuthn>;
  const signed = (key: CryptoKey, header: { kid?: string } = {}, claims: JWTPayload = {}): Promise<string> =>
    new SignJWT({ sub: 'alice', exp: nowSeconds + 600, ...claims })
      .setProtectedHeader({ alg: 'RS256', ...header })
      .setIssuer(ISSUER)
      .sign(key);

  beforeAll(async () => {
    const pairs = await Promise.all([generateKeyPair('RS256'), generateKeyPair('RS256'), generateKeyPair('RS256')]);
    keys = pairs.map((pair) => pair.privateKey);
    // Two keys of the same algorithm and a third with a kid: a token without kid may be signed by any of them.
    const jwks = {
      keys: await Promise.all(
        pairs.map(async (pair, index) => ({ ...(await exportJWK(pair.publicKey)), alg: 'RS256', use: 'sig', ...(index === 2 ? { kid: 'named' } : {}) })),
      ),
    };
    several = compileJwtAuthn({
      providers: {
        'origins-0': {
          issuer: ISSUER,
          local_jwks: { inline_string: JSON.stringify(jwks) },
          from_params: ['token', 'secondary_token'],
          from_headers: [{ name: 'authorization', value_prefix: 'Bearer ' }],
        },
      },
      rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } } }],
    });
  });

  test('a token without kid verifies with whichever key of the set signed it', async () => {
    for (const key of keys) expect((await several(request(bearer(await signed(key))), NOW)).kind).toBe('allow');
  });

  test('a token without kid signed by no key of the set is 401 "Jwt verification fails"', async () => {
    expect(await several(request(bearer(await signed(otherKey))), NOW)).toMatchObject({ kind: 'deny', status: 401, message: 'Jwt verification fails' });
  });

  test('a kid that names no key is 401 "Jwks doesn\'t have key to match kid or alg from Jwt"', async () => {
    expect(await several(request(bearer(await signed(keys[0]!, { kid: 'nope' }))), NOW)).toMatchObject({
      kind: 'deny',
      status: 401,
      failure: 'no-matching-key',
      message: "Jwks doesn't have key to match kid or alg from Jwt",
    });
  });

  test('one valid and one expired token in two configured locations: 401; two valid ones pass', async () => {
    const good = await signed(keys[0]!);
    const expired = await signed(keys[1]!, {}, { exp: nowSeconds - 3600 });
    expect(await several(request({}, `/ip?token=${good}&secondary_token=${expired}`), NOW)).toMatchObject({ kind: 'deny', status: 401, failure: 'expired' });
    expect(await several(request({}, `/ip?token=${expired}&secondary_token=${good}`), NOW)).toMatchObject({ kind: 'deny', status: 401, failure: 'expired' });
    expect(await several(request(bearer(good), `/ip?token=${expired}`), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect((await several(request({}, `/ip?token=${good}&secondary_token=${await signed(keys[2]!, { kid: 'named' })}`), NOW)).kind).toBe('allow');
  });
});

describe('the verified-token cache against an attacker', () => {
  let signer: CryptoKey;
  let jwks: string;
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    signer = pair.privateKey;
    jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] });
  });
  // Each test compiles its own filter: a fresh cache, filled by the first (good) request.
  const fresh = (audiences?: string[]): ReturnType<typeof compileJwtAuthn> =>
    compileJwtAuthn({
      providers: { p: { issuer: ISSUER, ...(audiences ? { audiences } : {}), local_jwks: { inline_string: jwks }, payload_in_metadata: 'payload' } },
      rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
    });
  const signedToken = (claims: JWTPayload): Promise<string> =>
    new SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).sign(signer);
  /** The token with one byte of its signature changed (still base64url). */
  const flipped = (jwt: string, at: number): string => {
    const index = jwt.lastIndexOf('.') + 1 + at;
    return `${jwt.slice(0, index)}${jwt[index] === 'A' ? 'B' : 'A'}${jwt.slice(index + 1)}`;
  };

  test('a cached token is refused once it expires (past exp and the 60 s skew), and stays refused', async () => {
    const run = fresh();
    const jwt = await signedToken({ exp: nowSeconds + 10 });
    expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
    const later = new Date(NOW.getTime() + 71_000);
    expect(await run(request(bearer(jwt)), later)).toMatchObject({ kind: 'deny', status: 401, failure: 'expired' });
    expect(await run(request(bearer(jwt)), later)).toMatchObject({ kind: 'deny', status: 401, failure: 'expired' });
    // Going back in time does not revive a cached verdict that was dropped: the verifier decides again.
    expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
  });

  test('after a good token was cached, the same token with a flipped signature byte is refused', async () => {
    const run = fresh();
    const jwt = await signedToken({ exp: nowSeconds + 600 });
    expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
    for (const at of [0, 10, 100]) {
      expect(await run(request(bearer(flipped(jwt, at))), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    }
    // A forged payload under the cached token's signature is refused too.
    const [header, , signature] = jwt.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ sub: 'root', iss: ISSUER, exp: nowSeconds + 600 })).toString('base64url');
    expect(await run(request(bearer(`${header}.${forgedPayload}.${signature}`)), NOW)).toMatchObject({ kind: 'deny', status: 401 });
    expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
  });

  test('a token cached for one audience requirement is not accepted by another', async () => {
    const bookstore = fresh(['bookstore']);
    const jwt = await signedToken({ exp: nowSeconds + 600, aud: 'bookstore' });
    expect((await bookstore(request(bearer(jwt)), NOW)).kind).toBe('allow');
    const library = fresh(['library']);
    expect(await library(request(bearer(jwt)), NOW)).toMatchObject({ kind: 'deny', status: 403, failure: 'audience-not-allowed' });
  });

  test('past the cache bound, every token is still decided right (evicted ones verified again)', async () => {
    const run = fresh();
    const tokens = await Promise.all(Array.from({ length: 120 }, (_, index) => signedToken({ exp: nowSeconds + 600, jti: String(index) })));
    for (const jwt of tokens) expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
    for (const jwt of tokens) expect((await run(request(bearer(jwt)), NOW)).kind).toBe('allow');
    expect(await run(request(bearer(flipped(tokens[0] as string, 5))), NOW)).toMatchObject({ kind: 'deny', status: 401 });
  });
});
