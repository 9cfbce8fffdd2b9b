import { describe, expect, test } from '@jest/globals';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { analyze, destinationRule, gateway, meshObject, service, virtualService } from '../testing/fixtures.js';
import { conflictingMeshGatewayHostsAnalyzer } from './conflicting-mesh-gateway-hosts-analyzer.js';
import { destinationHostAnalyzer } from './virtual-service-destination-host-analyzer.js';
import { virtualServiceGatewayAnalyzer } from './virtual-service-gateway-analyzer.js';
import { regexAnalyzer } from './virtual-service-regex-analyzer.js';
import { destinationRuleAnalyzer } from './virtual-service-subset-analyzer.js';

const routeTo = (destination: object, extra: object = {}): object => ({ hosts: ['front'], http: [{ route: [{ destination }] }], ...extra });
const reviews = service('reviews', 'default', { app: 'reviews' }, [{ name: 'http', port: 9080 }]);
const ratings = service('ratings', 'backend', { app: 'ratings' }, [
  { name: 'http', port: 9080 },
  { name: 'grpc', port: 9090 },
]);

describe('virtualservice.DestinationHostAnalyzer', () => {
  test.each([
    ['a short name in its own namespace', 'default', { host: 'reviews' }],
    ['a full name in another namespace', 'other', { host: 'reviews.default.svc.cluster.local' }],
    ['a known port', 'default', { host: 'reviews', port: { number: 9080 } }],
    ['a wildcard host', 'default', { host: '*.example.com' }],
  ])('%s stays quiet', (_case, namespace, destination) => {
    expect(analyze(destinationHostAnalyzer, [reviews, virtualService('vs', namespace, routeTo(destination))])).toEqual([]);
  });

  test('a ServiceEntry host counts where the entry is visible: exactly or by its wildcard, with its ports', () => {
    const entry = (name: string, namespace: string, spec: object): object => meshObject('ServiceEntry', name, namespace, spec);
    const payments = entry('payments', 'ext', {
      hosts: ['api.payments.example.com'],
      resolution: 'DNS',
      ports: [{ number: 443, name: 'https', protocol: 'HTTPS' }],
    });
    const wild = entry('wild', 'ext', { hosts: ['*.wild.example.com'], ports: [{ number: 80, name: 'http' }], exportTo: ['.'] });
    const vs = (namespace: string, destination: object): object => virtualService('vs', namespace, routeTo(destination));
    expect(analyze(destinationHostAnalyzer, [payments, vs('shop', { host: 'api.payments.example.com' })])).toEqual([]);
    expect(analyze(destinationHostAnalyzer, [payments, vs('shop', { host: 'api.payments.example.com', port: { number: 80 } })])).toEqual([
      'Error [MSH0101] (VirtualService vs.shop) Referenced host+port not found: "api.payments.example.com+80"',
    ]);
    expect(analyze(destinationHostAnalyzer, [wild, vs('ext', { host: 'a.wild.example.com' })])).toEqual([]);
    // exportTo "." keeps the entry to its own namespace.
    expect(analyze(destinationHostAnalyzer, [wild, vs('shop', { host: 'a.wild.example.com' })])).toEqual([
      'Error [MSH0101] (VirtualService vs.shop) Referenced host not found: "a.wild.example.com"',
    ]);
  });

  test('a short name resolves in the VirtualService namespace only: another namespace has no such Service', () => {
    expect(analyze(destinationHostAnalyzer, [reviews, virtualService('vs', 'other', routeTo({ host: 'reviews' }))])).toEqual([
      'Error [MSH0101] (VirtualService vs.other) Referenced host not found: "reviews"',
    ]);
  });

  test('a non-default cluster domain: the domain suffix names Services, cluster.local does not', () => {
    const vs = (host: string): object => virtualService('vs', 'other', routeTo({ host }));
    expect(analyze(destinationHostAnalyzer, [reviews, vs('reviews.default.svc.corp.example')], { domainSuffix: 'corp.example' })).toEqual([]);
    expect(analyze(destinationHostAnalyzer, [reviews, vs('reviews.default.svc.cluster.local')], { domainSuffix: 'corp.example' })).toEqual([
      'Error [MSH0101] (VirtualService vs.other) Referenced host not found: "reviews.default.svc.cluster.local"',
    ]);
  });

  test('unknown hosts, mirrors and ports are reported', () => {
    const vs = virtualService('vs', 'default', {
      hosts: ['front'],
      http: [{ route: [{ destination: { host: 'reviews', port: { number: 1 } } }], mirror: { host: 'nothing' } }],
    });
    expect(analyze(destinationHostAnalyzer, [reviews, vs])).toEqual([
      'Error [MSH0101] (VirtualService vs.default) Referenced host not found: "nothing"',
      'Error [MSH0101] (VirtualService vs.default) Referenced host+port not found: "reviews+1"',
    ]);
  });

  test('on a gateway a multi-port Service needs a port; sidecars do not', () => {
    const host = { host: 'ratings.backend.svc.cluster.local' };
    expect(analyze(destinationHostAnalyzer, [ratings, virtualService('vs', 'default', routeTo(host, { gateways: ['gw'] }))])).toEqual([
      'Error [MSH0112] (VirtualService vs.default) This VirtualService routes to a service "ratings.backend.svc.cluster.local" that exposes multiple ports [9080 9090]. Specifying a port in the destination is required to disambiguate.',
    ]);
    expect(analyze(destinationHostAnalyzer, [ratings, virtualService('vs', 'default', routeTo(host))])).toEqual([]);
  });
});

describe('virtualservice.DestinationHostAnalyzer: subsets that ingress requests ignore (MSH0140)', () => {
  const split = virtualService('reviews-split', 'default', { hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews', subset: 'v1' } }] }] });
  const ingress = (destination: object, gateways: string[] = ['gw'], hosts: string[] = ['front']): object =>
    virtualService('ingress', 'default', { hosts, gateways, http: [{ route: [{ destination }] }] });
  test('a gateway route without subset to a host another VirtualService splits by subset', () => {
    expect(analyze(destinationHostAnalyzer, [reviews, split, ingress({ host: 'reviews' })])).toEqual([
      'Warning [MSH0140] (VirtualService ingress.default) Subset in virtual service default/reviews-split has no effect on ingress gateway default/ingress requests',
    ]);
  });
  test('a VirtualService splitting its own host, bound to a gateway, is reported about itself', () => {
    const both = virtualService('both', 'default', {
      hosts: ['reviews'],
      gateways: ['gw'],
      http: [
        { match: [{ uri: { prefix: '/v1' } }], route: [{ destination: { host: 'reviews', subset: 'v1' } }] },
        { route: [{ destination: { host: 'reviews' } }] },
      ],
    });
    expect(analyze(destinationHostAnalyzer, [reviews, both])).toEqual([
      'Warning [MSH0140] (VirtualService both.default) Subset in virtual service default/both has no effect on ingress gateway default/both requests',
    ]);
  });
  test.each([
    ['a route with its own subset', [split, ingress({ host: 'reviews', subset: 'v2' })]],
    ['a VirtualService without gateways', [split, ingress({ host: 'reviews' }, [])]],
    ['a host written otherwise (full name)', [split, ingress({ host: 'reviews.default.svc.cluster.local' })]],
    [
      'subsets to a host the splitting VirtualService does not serve',
      [
        virtualService('other', 'default', { hosts: ['front2'], http: [{ route: [{ destination: { host: 'reviews', subset: 'v1' } }] }] }),
        ingress({ host: 'reviews' }),
      ],
    ],
  ])('%s stays quiet', (_case, objects) => {
    expect(analyze(destinationHostAnalyzer, [reviews, ...objects])).toEqual([]);
  });
});

describe('virtualservice.GatewayAnalyzer', () => {
  const gw = gateway('gw', 'edge', { selector: { app: 'gw' }, servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] });
  test.each([['edge/gw'], ['mesh']])('%s is found', (name) => {
    expect(analyze(virtualServiceGatewayAnalyzer, [gw, virtualService('vs', 'default', routeTo({ host: 'reviews' }, { gateways: [name] }))])).toEqual([]);
  });
  test('a gateway of another namespace named without its namespace, and one in a match, are not found', () => {
    const spec = { hosts: ['front'], gateways: ['gw'], http: [{ match: [{ gateways: ['edge/missing'] }], route: [{ destination: { host: 'reviews' } }] }] };
    expect(analyze(virtualServiceGatewayAnalyzer, [gw, virtualService('vs', 'default', spec)])).toEqual([
      'Error [MSH0101] (VirtualService vs.default) Referenced gateway not found: "edge/missing"',
      'Error [MSH0101] (VirtualService vs.default) Referenced gateway not found: "gw"',
      'Warning [MSH0132] (VirtualService vs.default) one or more host [front] defined in VirtualService default/vs not found in Gateway default/gw.',
    ]);
  });

  const edge = (...hosts: string[]): object =>
    gateway('gw', 'edge', { selector: { app: 'gw' }, servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts }] });
  const bound = (namespace: string, ...hosts: string[]): object =>
    virtualService('vs', namespace, { ...routeTo({ host: 'reviews' }), hosts, gateways: ['edge/gw'] });
  test.each([
    ['an exact host', edge('api.example.com'), bound('default', 'api.example.com')],
    ['a wildcard server host', edge('*.example.com'), bound('default', 'api.example.com')],
    ['a narrower wildcard host (*.a.example.com against *.example.com)', edge('*.example.com'), bound('default', '*.a.example.com')],
    ['a VirtualService host of *', edge('api.example.com'), bound('default', '*')],
    ['one host of several', edge('b.example.com'), bound('default', 'a.example.com', 'b.example.com')],
    ['ns/host for the VirtualService namespace', edge('default/api.example.com'), bound('default', 'api.example.com')],
    ['./host for the Gateway namespace', edge('./api.example.com'), bound('edge', 'api.example.com')],
    ['*/host and */*', edge('*/api.example.com', 'other/x.example.com'), bound('default', 'api.example.com')],
    ['*/* with other hosts', edge('other/x.example.com', '*/*'), bound('default', 'api.example.com')],
  ])('%s is found in the Gateway', (_case, gw, vs) => {
    expect(analyze(virtualServiceGatewayAnalyzer, [gw, vs])).toEqual([]);
  });

  test.each([
    ['another host', edge('api.example.com'), bound('default', 'web.example.com')],
    ['a wildcard not covering it (*.example.com against example.com)', edge('*.example.com'), bound('default', 'example.com')],
    ['ns/host for another namespace', edge('other/api.example.com'), bound('default', 'api.example.com')],
    ['./host from another namespace', edge('./api.example.com'), bound('default', 'api.example.com')],
  ])('%s is not found in the Gateway', (_case, gw, vs) => {
    const host = (vs as { spec: { hosts: string[] } }).spec.hosts.join(' ');
    expect(analyze(virtualServiceGatewayAnalyzer, [gw, vs])).toEqual([
      `Warning [MSH0132] (VirtualService vs.default) one or more host [${host}] defined in VirtualService default/vs not found in Gateway edge/gw.`,
    ]);
  });
});

describe('virtualservice.DestinationRuleAnalyzer', () => {
  const rule = (namespace: string, host: string, extra: object = {}): object =>
    destinationRule('dr', namespace, { host, subsets: [{ name: 'v1', labels: { version: 'v1' } }], ...extra });
  const vs = (namespace: string, host: string): object => virtualService('vs', namespace, routeTo({ host, subset: 'v1' }));
  test.each([
    ['same namespace, short names', rule('default', 'reviews'), vs('default', 'reviews')],
    ['rule in the service namespace, route from another by full name', rule('default', 'reviews'), vs('other', 'reviews.default.svc.cluster.local')],
    ['a wildcard rule host', rule('default', '*.default.svc.cluster.local'), vs('default', 'reviews')],
  ])('%s stays quiet', (_case, dr, virtual) => {
    expect(analyze(destinationRuleAnalyzer, [dr, virtual])).toEqual([]);
  });

  test('a subset no rule defines, or a rule not exported to the route namespace, is reported', () => {
    expect(analyze(destinationRuleAnalyzer, [rule('default', 'reviews'), virtualService('vs', 'default', routeTo({ host: 'reviews', subset: 'v2' }))])).toEqual(
      ['Error [MSH0101] (VirtualService vs.default) Referenced host+subset in destinationrule not found: "reviews+v2"'],
    );
    expect(analyze(destinationRuleAnalyzer, [rule('default', 'reviews', { exportTo: ['.'] }), vs('other', 'reviews.default.svc.cluster.local')])).toEqual([
      'Error [MSH0101] (VirtualService vs.other) Referenced host+subset in destinationrule not found: "reviews.default.svc.cluster.local+v1"',
    ]);
  });
});

describe('virtualservice.ConflictingMeshGatewayHostsAnalyzer', () => {
  const vs = (name: string, namespace: string, hosts: string[], extra: object = {}): object =>
    virtualService(name, namespace, { hosts, http: [{ route: [{ destination: { host: 'reviews.default.svc.cluster.local' } }] }], ...extra });
  test('two mesh VirtualServices for the same host conflict, short and full names alike', () => {
    const lines = analyze(conflictingMeshGatewayHostsAnalyzer, [vs('a', 'default', ['reviews']), vs('b', 'other', ['reviews.default.svc.cluster.local'])]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      'Error [MSH0109] (VirtualService a.default) The VirtualServices default/a,other/b associated with mesh gateway define the same host reviews.default.svc.cluster.local which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.',
    );
  });

  test.each([
    [
      'hosts exported to disjoint namespaces',
      [vs('a', 'ns1', ['api.example.com'], { exportTo: ['.'] }), vs('b', 'ns2', ['api.example.com'], { exportTo: ['.'] })],
      undefined,
    ],
    ['the same short name in two namespaces', [vs('a', 'ns1', ['reviews']), vs('b', 'ns2', ['reviews'])], undefined],
    ['one on a gateway only', [vs('a', 'default', ['reviews']), vs('b', 'default', ['reviews'], { gateways: ['gw'] })], undefined],
    [
      'mesh default export to the own namespace',
      [vs('a', 'ns1', ['api.example.com']), vs('b', 'ns2', ['api.example.com'])],
      { ...DEFAULT_MESH_CONFIG, defaultVirtualServiceExportTo: ['.'] },
    ],
  ])('%s do not conflict', (_case, objects, meshConfig) => {
    expect(analyze(conflictingMeshGatewayHostsAnalyzer, objects, meshConfig ? { meshConfig } : {})).toEqual([]);
  });

  test('exported to a shared namespace, they conflict', () => {
    const objects = [vs('a', 'ns1', ['api.example.com'], { exportTo: ['.', 'ns3'] }), vs('b', 'ns2', ['api.example.com'], { exportTo: ['ns3'] })];
    expect(analyze(conflictingMeshGatewayHostsAnalyzer, objects)).toHaveLength(2);
  });
});

describe('virtualservice.RegexAnalyzer', () => {
  const withMatch = (match: object, extra: object = {}): object =>
    virtualService('vs', 'default', { hosts: ['reviews'], http: [{ match: [match], route: [{ destination: { host: 'reviews' } }], ...extra }] });
  test('lookahead (not RE2) in a uri match and a bad header regex are reported by field, on the invalid VirtualService', () => {
    expect(analyze(regexAnalyzer, [withMatch({ uri: { regex: '/(?=x)' }, headers: { 'x-id': { regex: '[' } } })], { invalid: true })).toEqual([
      'Warning [MSH0122] (VirtualService vs.default) Field "headers[x-id]" regular expression invalid: "[" (expected a valid RE2 regular expression, got "[": error parsing regexp: missing closing ]: `[`)',
      'Warning [MSH0122] (VirtualService vs.default) Field "uri" regular expression invalid: "/(?=x)" (expected a valid RE2 regular expression, got "/(?=x)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`)',
    ]);
  });
  test('valid regexes, and "*" in withoutHeaders, stay quiet', () => {
    expect(
      analyze(regexAnalyzer, [
        withMatch(
          { uri: { regex: '/api/v[0-9]+/.*' }, withoutHeaders: { 'x-a': { regex: '*' } } },
          { corsPolicy: { allowOrigins: [{ regex: 'https://.*\\.example\\.com' }] } },
        ),
      ]),
    ).toEqual([]);
  });
});
