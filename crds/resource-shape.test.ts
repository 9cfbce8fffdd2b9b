import { describe, expect, test } from '@jest/globals';
import { shapeForAnalysis, validateResource } from './index.js';

const virtualService = (spec: unknown, extra: object = {}) => ({
  apiVersion: 'networking.mesh.io/v1alpha3',
  kind: 'VirtualService',
  metadata: { name: 'reviews', namespace: 'shop' },
  spec,
  ...extra,
});

const gateway = (servers: unknown[]) => ({
  apiVersion: 'networking.mesh.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'shop' },
  spec: { selector: { mesh: 'ingressgateway' }, servers },
});

describe('shapeForAnalysis', () => {
  test('a valid object is its typed form, nothing omitted', () => {
    const object = virtualService({ hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' } }] }] });
    expect(shapeForAnalysis(object)).toEqual({ resource: validateResource(object).resource, omitted: [] });
  });

  test('semantically invalid values stay as they are: an empty host list, a negative retry count, a port out of range, a 0s timeout', () => {
    const object = virtualService({
      hosts: [],
      http: [{ timeout: '0s', retries: { attempts: -1 }, route: [{ destination: { host: 'ratings', port: { number: 70000 } } }] }],
    });
    expect(validateResource(object).errors.length).toBeGreaterThan(0);
    expect(shapeForAnalysis(object)).toEqual({ resource: object, omitted: [] });
  });

  test('unknown fields, nulls and enums given by number are left out, as the reference decoder ignores them', () => {
    const object = virtualService(
      { hosts: ['reviews'], exportTo: null, http: [{ retryPolicy: { attempts: 3 }, route: [{ destination: { host: 'reviews' } }] }] },
      { extra: true },
    );
    const tls = gateway([{ port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { mode: 1, credentialName: 'cert' } }]);
    expect(shapeForAnalysis(object)).toEqual({
      resource: virtualService({ hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' } }] }] }),
      omitted: ['extra', 'spec.exportTo', 'spec.http[0].retryPolicy'],
    });
    expect(shapeForAnalysis(tls)?.resource.spec).toEqual(
      gateway([{ port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { credentialName: 'cert' } }]).spec,
    );
    expect(shapeForAnalysis(tls)?.omitted).toEqual(['spec.servers[0].tls.mode']);
  });

  test('an integer written as a string is read as the number; an absent required field reads as its zero value', () => {
    const shaped = shapeForAnalysis(gateway([{ port: { number: '8080', name: 'http', protocol: 'HTTP' }, hosts: ['*'] }, { hosts: ['b.example.com'] }]));
    expect(shaped?.resource.spec).toEqual(
      gateway([
        { port: { number: 8080, name: 'http', protocol: 'HTTP' }, hosts: ['*'] },
        { port: { number: 0, name: '', protocol: '' }, hosts: ['b.example.com'] },
      ]).spec,
    );
    expect(shaped?.omitted).toEqual([]);
    const hostless = shapeForAnalysis(virtualService({ hosts: ['reviews'], http: [{ route: [{ destination: {} }] }] }));
    expect(hostless?.resource).toEqual(virtualService({ hosts: ['reviews'], http: [{ route: [{ destination: { host: '' } }] }] }));
  });

  test.each([
    ['a word where a number belongs', virtualService({ hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' }, weight: 'fifty' }] }] })],
    ['a number where a string belongs', virtualService({ hosts: [7] })],
    ['a malformed duration', virtualService({ hosts: ['reviews'], http: [{ timeout: 'soon', route: [{ destination: { host: 'reviews' } }] }] })],
    ['an unknown enum name', gateway([{ port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { mode: 'STRICT' } }])],
    ['a spec that is not an object', virtualService('hosts: [reviews]')],
    ['metadata that is not an object', { ...virtualService({ hosts: ['reviews'] }), metadata: 'reviews' }],
    ['an apiVersion the kind is not served at', { ...virtualService({ hosts: ['reviews'] }), apiVersion: 'v1' }],
    ['no object', 'kind: VirtualService'],
  ])('%s: the reference cannot decode the object, and it is not typed', (_, object) => {
    expect(shapeForAnalysis(object)).toBeUndefined();
  });

  test('no spec: nothing to type, the object stays raw (the reference would hold an empty spec)', () => {
    expect(shapeForAnalysis(virtualService(undefined))).toBeUndefined();
    expect(shapeForAnalysis(virtualService(null))).toBeUndefined();
  });
});
