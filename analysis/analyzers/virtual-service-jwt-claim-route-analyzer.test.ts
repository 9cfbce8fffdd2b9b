import { describe, expect, test } from '@jest/globals';
import { analyze, gateway, pod, requestAuthentication, virtualService } from '../testing/fixtures.js';
import { jwtClaimRouteAnalyzer } from './virtual-service-jwt-claim-route-analyzer.js';

const gw = gateway('gw', 'mesh-system', {
  selector: { mesh: 'ingressgateway' },
  servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
});
const gatewayPod = pod('ingress-1', 'mesh-system', { labels: { mesh: 'ingressgateway' } });
const otherPod = pod('app-1', 'default', { labels: { app: 'web' } });
const routing = (match: object, gateways: string[] = ['mesh-system/gw']): object =>
  virtualService('vs', 'default', { hosts: ['front.example.com'], gateways, http: [{ match: [match], route: [{ destination: { host: 'web' } }] }] });
const claim = { headers: { '@request.auth.claims.group': { exact: 'admin' } } };
const ra = (namespace: string, matchLabels?: Record<string, string>): object =>
  requestAuthentication('jwt', namespace, { ...(matchLabels ? { selector: { matchLabels } } : {}), jwtRules: [{ issuer: 'https://issuer.example.com' }] });
const message = (key: string): string =>
  `Error [MSH0149] (VirtualService vs.default) The virtual service uses the JWT claim based routing (key: ${key}) but found no request authentication for the gateway (mesh-system/gw) pod (ingress-1). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.`;

describe('virtualservice.JWTClaimRouteAnalyzer', () => {
  test('routing on a claim through a gateway whose pod no RequestAuthentication applies to', () => {
    expect(analyze(jwtClaimRouteAnalyzer, [gw, gatewayPod, otherPod, routing(claim)])).toEqual([message('@request.auth.claims.group')]);
  });

  test.each([
    ['one of another namespace', ra('default')],
    ['one of the root namespace selecting other pods', ra('mesh-system', { app: 'web' })],
  ])('a RequestAuthentication that does not apply: %s', (_case, authentication) => {
    expect(analyze(jwtClaimRouteAnalyzer, [gw, gatewayPod, authentication, routing(claim)])).toEqual([message('@request.auth.claims.group')]);
  });

  test('withoutHeaders on a claim count too', () => {
    const match = { withoutHeaders: { '@request.auth.claims.role': { exact: 'guest' } } };
    expect(analyze(jwtClaimRouteAnalyzer, [gw, gatewayPod, routing(match)])).toEqual([message('@request.auth.claims.role')]);
  });

  test.each([
    ['a RequestAuthentication of the root namespace for every workload', [ra('mesh-system')]],
    ['one selecting the gateway pod', [ra('mesh-system', { mesh: 'ingressgateway' })]],
  ])('%s stays quiet', (_case, objects) => {
    expect(analyze(jwtClaimRouteAnalyzer, [gw, gatewayPod, ...objects, routing(claim)])).toEqual([]);
  });

  test.each([
    ['no claim header', routing({ headers: { 'x-group': { exact: 'admin' } } })],
    ['a Gateway that does not exist', routing(claim, ['mesh-system/missing'])],
  ])('%s stays quiet', (_case, vs) => {
    expect(analyze(jwtClaimRouteAnalyzer, [gw, gatewayPod, vs])).toEqual([]);
  });
});
