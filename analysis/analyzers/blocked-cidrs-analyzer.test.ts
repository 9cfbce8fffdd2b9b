import { describe, expect, test } from '@jest/globals';
import { analyze, deployment, requestAuthentication } from '../testing/fixtures.js';
import { blockedCidrsAnalyzer } from './blocked-cidrs-analyzer.js';

const jwt = (name: string, namespace = 'default'): object =>
  requestAuthentication(name, namespace, { jwtRules: [{ issuer: 'https://example.com', jwksUri: 'https://example.com/.well-known/jwks.json' }] });

/** The daemon's Deployment as the meshd chart renders it, with the given env on its containers. */
function daemon(env: object[] = [], options: { name?: string; app?: string; container?: string } = {}): object {
  const labels = { app: options.app ?? 'meshd', mesh: 'pilot' };
  return deployment(
    options.name ?? 'meshd',
    'mesh-system',
    labels,
    { labels },
    { containers: [{ name: options.container ?? 'discovery', image: 'mesh/pilot:1', env }] },
  );
}

const WARNING = (origin: string, count: number, names: string): string =>
  `Warning [MSH0175] (Deployment ${origin}) BLOCKED_CIDRS_IN_JWKS_URIS is not configured but ${count} RequestAuthentication resource(s) exist (${names}). ` +
  'Consider configuring it to restrict JWKS URI fetches to trusted networks.';

describe('authn.BlockedCIDRsAnalyzer', () => {
  test("fires on the daemon Deployment when RequestAuthentications exist and the setting is missing (the reference's blocked-cidrs-missing)", () => {
    expect(analyze(blockedCidrsAnalyzer, [jwt('jwt-auth'), daemon()])).toEqual([WARNING('meshd.mesh-system', 1, 'default/jwt-auth')]);
  });

  test('an empty value, a value from elsewhere (valueFrom) or the setting on another container count as missing', () => {
    expect(analyze(blockedCidrsAnalyzer, [jwt('a'), daemon([{ name: 'BLOCKED_CIDRS_IN_JWKS_URIS', value: '' }])])).toHaveLength(1);
    const fromConfigMap = { name: 'BLOCKED_CIDRS_IN_JWKS_URIS', valueFrom: { configMapKeyRef: { name: 'cidrs', key: 'cidrs' } } };
    expect(analyze(blockedCidrsAnalyzer, [jwt('a'), daemon([fromConfigMap])])).toHaveLength(1);
    expect(
      analyze(blockedCidrsAnalyzer, [jwt('a'), daemon([{ name: 'BLOCKED_CIDRS_IN_JWKS_URIS', value: '10.0.0.0/8' }], { container: 'sidecar' })]),
    ).toHaveLength(1);
  });

  test('every RequestAuthentication counts, sorted, five named and the rest counted; each daemon revision is reported', () => {
    const many = ['g', 'f', 'e', 'd', 'c', 'b', 'a'].map((name) => jwt(name, name === 'a' ? 'auth' : 'default'));
    const issuerOnly = requestAuthentication('issuer-only', 'default', { jwtRules: [{ issuer: 'https://example.com' }] });
    expect(analyze(blockedCidrsAnalyzer, [...many, issuerOnly, daemon(), daemon([], { name: 'meshd-canary' })])).toEqual([
      WARNING('meshd-canary.mesh-system', 8, 'auth/a, default/b, default/c, default/d, default/e, and 3 more'),
      WARNING('meshd.mesh-system', 8, 'auth/a, default/b, default/c, default/d, default/e, and 3 more'),
    ]);
  });

  test('quiet when the setting is there (blocked-cidrs-configured), with no RequestAuthentication (blocked-cidrs-no-ra), or no daemon Deployment', () => {
    const configured = daemon([{ name: 'BLOCKED_CIDRS_IN_JWKS_URIS', value: '10.0.0.0/8,192.168.0.0/16,172.16.0.0/12' }]);
    expect(analyze(blockedCidrsAnalyzer, [jwt('jwt-auth'), configured])).toEqual([]);
    expect(analyze(blockedCidrsAnalyzer, [daemon()])).toEqual([]);
    // Files alone: no daemon Deployment among them, nothing to say about the daemon.
    expect(analyze(blockedCidrsAnalyzer, [jwt('jwt-auth')])).toEqual([]);
    expect(analyze(blockedCidrsAnalyzer, [jwt('jwt-auth'), daemon([], { name: 'reviews', app: 'reviews' })])).toEqual([]);
  });
});
