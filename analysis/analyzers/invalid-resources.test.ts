import { describe, expect, test } from '@jest/globals';
import { ALL_ANALYZERS } from '../all-analyzers.js';
import type { Analyzer } from '../analyzer.js';
import { analyze, gateway, service, virtualService } from '../testing/fixtures.js';
import { conflictingGatewayAnalyzer } from './gateway-config-analyzers.js';
import { SCHEMA_ANALYZERS } from './schema-analyzers.js';
import { destinationHostAnalyzer } from './virtual-service-destination-host-analyzer.js';
import { virtualServiceGatewayAnalyzer } from './virtual-service-gateway-analyzer.js';
import { regexAnalyzer } from './virtual-service-regex-analyzer.js';

// Invalid mesh objects: the reference reports their schema errors (MSH0106) and still analyses
// whatever its decoder could read, so the other analyzers see them too. `analyze` fails on MSH0001.
const schema = (kind: string): Analyzer => {
  const analyzer = SCHEMA_ANALYZERS.find((a) => a.name === `schema.ValidationAnalyzer.${kind}`);
  if (analyzer === undefined) throw new Error(kind);
  return analyzer;
};
const reviews = service('reviews', 'shop', { app: 'reviews' }, [{ name: 'http', port: 9080 }]);
const httpServer = (number: unknown, host: string): object => ({ port: { number, name: `http-${host}`, protocol: 'HTTP' }, hosts: [host] });
const shopGateway = (servers: object[]): object => gateway('shop-gateway', 'shop', { selector: { mesh: 'ingressgateway' }, servers });
const boundTo = (name: string, host: string): object =>
  virtualService(name, 'shop', { hosts: [host], gateways: ['shop-gateway'], http: [{ route: [{ destination: { host: 'reviews' } }] }] });

describe('an invalid VirtualService', () => {
  test('with an invalid field and an unknown destination host: both the schema error and the host not found', () => {
    const vs = virtualService('reviews', 'shop', { hosts: ['reviews'], http: [{ retries: { attempts: -1 }, route: [{ destination: { host: 'ratings' } }] }] });
    expect(analyze([schema('VirtualService'), destinationHostAnalyzer], [reviews, vs], { invalid: true })).toEqual([
      'Error [MSH0101] (VirtualService reviews.shop) Referenced host not found: "ratings"',
      'Error [MSH0106] (VirtualService reviews.shop) Schema validation error: spec.http[0].retries.attempts: expected an integer from 0 to 2147483647, got -1',
    ]);
  });

  test('with an unknown field routing to a known host: the schema error only (the reference ignores unknown fields)', () => {
    const vs = virtualService('reviews', 'shop', {
      hosts: ['reviews'],
      http: [{ route: [{ destination: { host: 'reviews' } }], retryPolicy: { attempts: 3 } }],
    });
    const lines = analyze([schema('VirtualService'), destinationHostAnalyzer], [reviews, vs], { invalid: true });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Error \[MSH0106\] \(VirtualService reviews\.shop\) Schema validation error: spec\.http\[0\]\.retryPolicy: unknown field "retryPolicy"/,
    );
  });

  test('with a regex RE2 refuses: the schema error and the regex message, as the reference gives both', () => {
    const vs = virtualService('reviews', 'shop', {
      hosts: ['reviews'],
      http: [{ match: [{ uri: { regex: '[' } }], route: [{ destination: { host: 'reviews' } }] }],
    });
    expect(analyze([schema('VirtualService'), regexAnalyzer], [vs], { invalid: true }).map((line) => line.split(') ')[0])).toEqual([
      'Error [MSH0106] (VirtualService reviews.shop',
      'Warning [MSH0122] (VirtualService reviews.shop',
    ]);
  });

  test('with a word where a number belongs: the schema errors, no crash, and nothing else (the reference cannot decode it)', () => {
    const vs = virtualService('weighted', 'shop', {
      hosts: ['reviews'],
      http: [{ route: [{ destination: { host: 'ratings', port: { number: 'http' } }, weight: 'fifty' }] }],
    });
    expect(analyze([schema('VirtualService'), destinationHostAnalyzer], [reviews, vs], { invalid: true })).toEqual([
      'Error [MSH0106] (VirtualService weighted.shop) Schema validation error: spec.http[0].route[0].destination.port.number: expected a number, got "http"',
      'Error [MSH0106] (VirtualService weighted.shop) Schema validation error: spec.http[0].route[0].weight: expected a number, got "fifty"',
    ]);
  });

  test('without a spec: the schema error only, from every analyzer there is', () => {
    const empty = { apiVersion: 'networking.mesh.io/v1alpha3', kind: 'VirtualService', metadata: { name: 'empty', namespace: 'shop' } };
    expect(analyze(ALL_ANALYZERS, [empty], { invalid: true })).toEqual([
      'Error [MSH0106] (VirtualService empty.shop) Schema validation error: spec: required: expected an object',
    ]);
  });
});

describe('an invalid Gateway', () => {
  test('with one invalid server: a VirtualService bound to it finds it (no MSH0101) and its host on the valid server', () => {
    const gw = shopGateway([httpServer(80, 'reviews.example.com'), httpServer(70000, 'other.example.com')]);
    expect(analyze([schema('Gateway'), virtualServiceGatewayAnalyzer], [gw, boundTo('public', 'reviews.example.com')], { invalid: true })).toEqual([
      'Error [MSH0106] (Gateway shop-gateway.shop) Schema validation error: spec.servers[1].port.number: expected a port number from 1 to 65535 (0 only with a unix:// bind), got 70000',
    ]);
  });

  test('with a server without a port: servers without ports do not conflict, as in the reference', () => {
    const portless = (name: string, host: string): object => gateway(name, 'shop', { selector: { mesh: 'ingressgateway' }, servers: [{ hosts: [host] }] });
    expect(analyze(conflictingGatewayAnalyzer, [portless('alpha', 'bar.bar'), portless('beta', 'foo.bar')], { invalid: true })).toEqual([]);
  });

  test('with a word where a port number belongs: the reference cannot decode it, so a VirtualService bound to it does not find it', () => {
    const gw = shopGateway([httpServer('eighty', 'typo.example.com')]);
    expect(analyze([schema('Gateway'), virtualServiceGatewayAnalyzer], [gw, boundTo('typo', 'typo.example.com')], { invalid: true })).toEqual([
      'Error [MSH0101] (VirtualService typo.shop) Referenced gateway not found: "shop-gateway"',
      'Error [MSH0106] (Gateway shop-gateway.shop) Schema validation error: spec.servers[0].port.number: expected a number, got "eighty"',
      'Warning [MSH0132] (VirtualService typo.shop) one or more host [typo.example.com] defined in VirtualService shop/typo not found in Gateway shop/shop-gateway.',
    ]);
  });
});
