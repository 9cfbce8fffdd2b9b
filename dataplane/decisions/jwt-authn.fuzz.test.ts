import { beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { exportJWK, generateKeyPair } from 'jose';
import { fuzzParameters } from '../../testing/fuzz.js';
import { compileJwtAuthn, type JwtVerdict } from './jwt-authn.js';
import type { HttpRequestFacts } from './facts.js';

// jwt_authn on an attacker's tokens: any Authorization header or token parameter gets a verdict
// (a 401 denial for anything that is not a valid token), never a throw and never an allow with a
// payload it did not verify.
let run: (request: HttpRequestFacts, now: Date) => Promise<JwtVerdict>;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
  run = compileJwtAuthn({
    providers: {
      'origins-0': {
        issuer: 'https://issuer.example',
        local_jwks: { inline_string: JSON.stringify(jwks) },
        payload_in_metadata: 'payload',
        from_params: ['token'],
        from_headers: [{ name: 'authorization', value_prefix: 'Bearer ' }],
      },
    },
    rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } } }],
  });
});

const segment = fc.oneof(
  fc.base64String({ maxLength: 120 }).map((s) => s.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')),
  fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
  fc.string({ maxLength: 40 }),
);
const token = fc.oneof(
  fc.tuple(segment, segment, segment).map((parts) => parts.join('.')),
  fc.array(segment, { maxLength: 5 }).map((parts) => parts.join('.')),
  fc.string({ maxLength: 200 }),
);

describe('jwt_authn under fuzzing', () => {
  test('any bearer token or token parameter: a 401 denial, never a throw or an unverified payload', async () => {
    await fc.assert(
      fc.asyncProperty(token, fc.boolean(), async (value, inHeader) => {
        const request: HttpRequestFacts = inHeader
          ? { method: 'GET', host: 'httpbin', path: '/headers', headers: { authorization: `Bearer ${value}` } }
          : { method: 'GET', host: 'httpbin', path: `/headers?token=${encodeURIComponent(value)}`, headers: {} };
        const verdict = await run(request, new Date('2026-11-24T12:00:00Z'));
        if (value === '') return;
        expect(verdict.kind === 'deny' ? verdict.status : verdict.metadata).toBe(401);
      }),
      fuzzParameters(),
    );
  });
});
