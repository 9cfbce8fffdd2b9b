import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import type { V1TokenReviewStatus } from '@kubernetes/client-node';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';

describe('API server double: service account tokens and TokenReview', () => {
  const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
  let server: ApiServerDouble;
  let auth: AuthenticationV1Api;

  beforeAll(async () => {
    server = await startApiServerDouble({ clock, bookmarkIntervalMs: 0 });
    auth = server.kubeConfig().makeApiClient(AuthenticationV1Api);
  });

  afterAll(async () => {
    await server.close();
  });

  const review = async (token: string, audiences?: string[]): Promise<V1TokenReviewStatus> => {
    const result = await auth.createTokenReview({ body: { spec: { token, ...(audiences ? { audiences } : {}) } } });
    return result.status ?? {};
  };

  test('issued tokens carry the real claims', () => {
    const token = server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'], expirationSeconds: 600, podName: 'web-1' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: 'https://kubernetes.default.svc.cluster.local',
      sub: 'system:serviceaccount:apps:web',
      aud: ['mesh-ca'],
      exp: clock.now() / 1000 + 600,
      'kubernetes.io': { namespace: 'apps', serviceaccount: { name: 'web' }, pod: { name: 'web-1' } },
    });
  });

  test('an issued token is accepted with the service account user, groups, pod extra and audiences', async () => {
    const token = server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca', 'other'], podName: 'web-1' });
    const status = await review(token, ['mesh-ca', 'unrelated']);
    expect(status.authenticated).toBe(true);
    expect(status.audiences).toEqual(['mesh-ca']);
    expect(status.user?.username).toBe('system:serviceaccount:apps:web');
    expect(status.user?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(status.user?.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated']);
    expect(status.user?.extra?.['authentication.kubernetes.io/pod-name']).toEqual(['web-1']);
  });

  test('without requested audiences the API server audience is used', async () => {
    expect((await review(server.issueToken({ namespace: 'apps', serviceAccount: 'web' }))).authenticated).toBe(true);
    const status = await review(server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'] }));
    expect(status.authenticated).toBe(false);
  });

  test('a token for other audiences is rejected with an error', async () => {
    const status = await review(server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['someone-else'] }), ['mesh-ca']);
    expect(status.authenticated).toBe(false);
    expect(status.error).toContain('token audiences ["someone-else"] is invalid for the target audiences ["mesh-ca"]');
    expect(status.user ?? {}).toEqual({});
  });

  test('an expired token is rejected', async () => {
    const token = server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'], expirationSeconds: 600 });
    expect((await review(token, ['mesh-ca'])).authenticated).toBe(true);
    clock.advance(601_000);
    const status = await review(token, ['mesh-ca']);
    expect(status.authenticated).toBe(false);
    expect(status.error).toContain('expired');
  });

  test('unknown and tampered tokens are rejected', async () => {
    expect(await review('not-a-jwt', ['mesh-ca'])).toMatchObject({ authenticated: false, error: expect.stringContaining('invalid bearer token') });
    const token = server.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'] });
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    expect(payload).not.toBe(forged);
    expect((await review(`${header}.${forged}.${signature}`, ['mesh-ca'])).authenticated).toBe(false);
    const empty = await expectStatus(() => auth.createTokenReview({ body: { spec: { token: '' } } }));
    expect(empty.code).toBe(422);
  });

  test('a token of a deleted and recreated service account is rejected', async () => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'sa1' } } });
    const token = server.issueToken({ namespace: 'default', serviceAccount: 'sa1', audiences: ['mesh-ca'] });
    expect((await review(token, ['mesh-ca'])).user?.uid).toBe(server.objects('v1', 'ServiceAccount', 'default')[0]?.metadata?.uid);
    await core.deleteNamespacedServiceAccount({ name: 'sa1', namespace: 'default' });
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'sa1' } } });
    expect((await review(token, ['mesh-ca'])).authenticated).toBe(false);
  });

  test('the TokenRequest subresource issues a token that TokenReview and the JWKS endpoint verify', async () => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'requester' } } });
    const request = await core.createNamespacedServiceAccountToken({
      name: 'requester',
      namespace: 'default',
      body: { spec: { audiences: ['mesh-ca'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p-1', uid: 'pod-uid' } } },
    });
    const token = request.status?.token ?? '';
    const status = await review(token, ['mesh-ca']);
    expect(status.user?.username).toBe('system:serviceaccount:default:requester');
    expect(status.user?.extra?.['authentication.kubernetes.io/pod-uid']).toEqual(['pod-uid']);
    const jwks = (await (await fetch(`${server.url}/openid/v1/jwks`)).json()) as JSONWebKeySet;
    const verified = await jwtVerify(token, createLocalJWKSet(jwks), { audience: 'mesh-ca', currentDate: new Date(clock.now()) });
    expect(verified.payload.sub).toBe('system:serviceaccount:default:requester');
    const missing = await expectStatus(() =>
      core.createNamespacedServiceAccountToken({ name: 'nobody', namespace: 'default', body: { spec: { audiences: [] } } }),
    );
    expect(missing.code).toBe(404);
  });
});
