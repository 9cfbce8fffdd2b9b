import { describe, expect, test } from '@jest/globals';
import { analyze, requestAuthentication, service } from '../testing/fixtures.js';
import { jwksUriAnalyzer } from './jwks-uri-analyzer.js';

const withUri = (uri: string): object => requestAuthentication('jwt', 'foo', { jwtRules: [{ issuer: 'issuer', jwksUri: uri }] });
const keys = service('keys', 'auth', { app: 'keys' }, [{ port: 8080, name: 'http' }]);

describe('requestauthentication.JwksUriAnalyzer', () => {
  test('fires for a jwksUri on a Service that does not exist, with or without the domain suffix', () => {
    expect(analyze(jwksUriAnalyzer, [withUri('http://missing.auth.svc.cluster.local:8080/jwks'), keys])).toEqual([
      'Error [MSH0101] (RequestAuthentication jwt.foo) Referenced JWKS provider not found: "missing.auth.svc.cluster.local"',
    ]);
    expect(analyze(jwksUriAnalyzer, [withUri('http://missing.auth.svc/jwks')])).toHaveLength(1);
  });

  test('stays quiet for an existing Service, an external provider, and a non-default cluster domain', () => {
    expect(analyze(jwksUriAnalyzer, [withUri('http://keys.auth.svc.cluster.local:8080/jwks'), keys])).toEqual([]);
    expect(analyze(jwksUriAnalyzer, [withUri('https://www.googleapis.com/oauth2/v3/certs')])).toEqual([]);
    expect(analyze(jwksUriAnalyzer, [withUri('http://keys.auth.svc.corp.example/jwks'), keys], { domainSuffix: 'corp.example' })).toEqual([]);
    // Under another cluster domain, a cluster.local host is not a Service of this cluster.
    expect(analyze(jwksUriAnalyzer, [withUri('http://missing.auth.svc.cluster.local/jwks')], { domainSuffix: 'corp.example' })).toEqual([]);
  });
});
