import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { hasAudienceClaim, newKubeTokenAuthenticator, type KubeTokenAuthenticatorOptions } from './kube-token-authenticator.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const unsignedJwt = (claims: Record<string, unknown>): string => `${b64({ alg: 'ES256' })}.${b64(claims)}.c2ln`;

describe('Kubernetes TokenReview authenticator', () => {
  let kube: ApiServerDouble;
  let userReviewer: Server;
  let userReviewerUrl: string;
  const reviewsSeen: unknown[] = [];

  beforeAll(async () => {
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    // An API server whose TokenReview vouches for a person, not a service account.
    userReviewer = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        reviewsSeen.push(JSON.parse(body));
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            status: { authenticated: true, user: { username: 'alice', groups: ['system:authenticated'] }, audiences: ['mesh-ca'] },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => userReviewer.listen(0, '127.0.0.1', resolve));
    userReviewerUrl = `http://127.0.0.1:${(userReviewer.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await kube?.close();
    await new Promise((resolve) => userReviewer?.close(resolve));
  });

  const userReviewerConfig = (): KubeConfig => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: userReviewerUrl, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'admin' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kubeConfig;
  };

  const authenticator = (overrides: Partial<KubeTokenAuthenticatorOptions> = {}) =>
    newKubeTokenAuthenticator({
      kubeConfig: kube.kubeConfig(),
      trustDomain: 'cluster.local',
      audiences: ['mesh-ca'],
      jwtPolicy: 'third-party-jwt',
      require3pToken: false,
      ...overrides,
    });

  test('no token is no credential', async () => {
    expect(await authenticator().authenticate({})).toBeUndefined();
  });

  test('third-party policy: the token must be for one of TOKEN_AUDIENCES', async () => {
    const auth = authenticator({ audiences: ['other', 'mesh-ca'] });
    const caller = await auth.authenticate({ bearerToken: kube.issueToken({ namespace: 'apps', serviceAccount: 'web', audiences: ['mesh-ca'] }) });
    expect(caller).toEqual({ identities: ['spiffe://cluster.local/ns/apps/sa/web'], authenticator: 'kube-token' });
    await expect(auth.authenticate({ bearerToken: kube.issueToken({ namespace: 'apps', serviceAccount: 'web' }) })).rejects.toThrow(/audiences/);
  });

  test('first-party policy: a token for the API server itself is accepted', async () => {
    const token = kube.issueToken({ namespace: 'apps', serviceAccount: 'web' });
    expect((await authenticator({ jwtPolicy: 'first-party-jwt' }).authenticate({ bearerToken: token }))?.identities).toEqual([
      'spiffe://cluster.local/ns/apps/sa/web',
    ]);
  });

  test('REQUIRE_3P_TOKEN refuses a token without an audience claim before asking the API server', async () => {
    const legacy = unsignedJwt({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:apps:web' });
    const seen = reviewsSeen.length;
    const kubeConfig = userReviewerConfig();
    await expect(authenticator({ kubeConfig, require3pToken: true }).authenticate({ bearerToken: legacy })).rejects.toThrow(/without audience/);
    expect(reviewsSeen.length).toBe(seen);
  });

  test('a user that is not a service account is refused', async () => {
    const kubeConfig = userReviewerConfig();
    const token = unsignedJwt({ aud: ['mesh-ca'], sub: 'alice' });
    await expect(authenticator({ kubeConfig }).authenticate({ bearerToken: token })).rejects.toThrow(/not a service account/);
    expect(reviewsSeen[reviewsSeen.length - 1]).toMatchObject({ spec: { token, audiences: ['mesh-ca'] } });
  });

  test.each([
    [unsignedJwt({ aud: 'x' }), true],
    [unsignedJwt({ aud: ['x'] }), true],
    [unsignedJwt({ aud: [] }), false],
    [unsignedJwt({ sub: 'y' }), false],
    ['garbage', false],
  ])('hasAudienceClaim(%s) is %s', (token, expected) => {
    expect(hasAudienceClaim(token)).toBe(expected);
  });
});
