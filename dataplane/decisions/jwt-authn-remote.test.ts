import { describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { compileJwtAuthn, type JwksFetcher } from './jwt-authn.js';
import type { HttpRequestFacts } from './facts.js';

// remote_jwks as Envoy's jwks cache keeps it: fetched when a token needs it, kept cache_duration
// (by the request's clock), fetched once for requests that wait together; a failed fetch is not
// kept, and its request is refused 401.
const ISSUER = 'https://issuer.example';

async function setup(): Promise<{ keySet: string; request: HttpRequestFacts; other: HttpRequestFacts }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const keySet = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] });
  const bearer = async (subject: string): Promise<HttpRequestFacts> => {
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setSubject(subject).sign(privateKey);
    return { method: 'GET', host: 'h', path: '/', headers: { authorization: `Bearer ${jwt}` } } as HttpRequestFacts;
  };
  return { keySet, request: await bearer('s'), other: await bearer('t') };
}

const filter = compileJwtAuthn({
  providers: {
    p: {
      issuer: ISSUER,
      remote_jwks: {
        http_uri: { uri: 'http://jwks.auth.svc.cluster.local:8080/keys', cluster: 'outbound|8080||jwks.auth.svc.cluster.local', timeout: { seconds: 2 } },
        cache_duration: { seconds: 300 },
      },
    },
  },
  rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
});

describe('jwt_authn remote_jwks', () => {
  test('fetched once through the named cluster, kept 300 s, fetched again after', async () => {
    const { keySet, request, other } = await setup();
    const calls: Parameters<JwksFetcher>[0][] = [];
    const fetchJwks: JwksFetcher = async (call) => (calls.push(call), keySet);
    const at = (seconds: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
    const verdicts = await Promise.all([filter(request, at(0), { fetchJwks }), filter(request, at(0), { fetchJwks })]);
    expect(verdicts.map((verdict) => verdict.kind)).toEqual(['allow', 'allow']);
    expect((await filter(request, at(299), { fetchJwks })).kind).toBe('allow');
    expect(calls).toEqual([{ cluster: 'outbound|8080||jwks.auth.svc.cluster.local', uri: 'http://jwks.auth.svc.cluster.local:8080/keys', timeoutMs: 2000 }]);
    // A token verified before needs no key set (the token cache); a new one after 300 s fetches again.
    expect((await filter(other, at(301), { fetchJwks })).kind).toBe('allow');
    expect(calls).toHaveLength(2);
  });

  test('a failed fetch refuses the token and is tried again on the next one; no fetcher refuses too', async () => {
    const { keySet, request } = await setup();
    const fresh = compileJwtAuthn({
      providers: { p: { issuer: ISSUER, remote_jwks: { http_uri: { uri: 'http://k/keys', cluster: 'c' } } } },
      rules: [{ match: { prefix: '/' }, requires: { provider_name: 'p' } }],
    });
    const now = new Date();
    expect(await fresh(request, now)).toMatchObject({ kind: 'deny', status: 401, message: 'Jwks remote fetch is failed' });
    expect(await fresh(request, now, { fetchJwks: () => Promise.reject(new Error('refused')) })).toMatchObject({
      kind: 'deny',
      status: 401,
      failure: 'jwks-fetch-failed',
    });
    expect((await fresh(request, now, { fetchJwks: async () => keySet })).kind).toBe('allow');
  });

  test('a provider with neither key source is refused', () => {
    expect(() => compileJwtAuthn({ providers: { p: { issuer: ISSUER } } })).toThrow('providers["p"]: needs local_jwks.inline_string or remote_jwks');
  });
});
