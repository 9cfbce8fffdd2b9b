import { describe, expect, test } from '@jest/globals';
import type { HttpRequestFacts } from './facts.js';
import { compileRouteConfiguration } from './route-configuration.js';

const request = (host: string, path = '/ip', headers: Record<string, string> = {}): HttpRequestFacts => ({ method: 'GET', host, path, headers });
const ctx = { random: 0, scheme: 'http' };

const decide = compileRouteConfiguration({
  name: '8000',
  virtual_hosts: [
    {
      name: 'httpbin.bar.svc.cluster.local:8000',
      domains: ['httpbin.bar.svc.cluster.local', 'httpbin.bar.svc.cluster.local:8000', 'httpbin.bar', 'httpbin.bar:8000', '10.96.0.10:8000'],
      routes: [
        {
          name: 'canary',
          match: { prefix: '/', headers: [{ name: 'end-user', string_match: { exact: 'jason' } }] },
          route: { cluster: 'outbound|8000|v2|httpbin.bar.svc.cluster.local' },
        },
        {
          name: 'rewrite',
          match: { prefix: '/old/' },
          route: { cluster: 'outbound|8000||httpbin.bar.svc.cluster.local', prefix_rewrite: '/new/', timeout: { seconds: 3 } },
        },
        { name: 'moved', match: { path: '/moved' }, redirect: { path_redirect: '/here', response_code: 'FOUND' } },
        {
          name: 'split',
          match: { prefix: '/' },
          route: {
            weighted_clusters: {
              clusters: [
                { name: 'outbound|8000|v1|httpbin.bar.svc.cluster.local', weight: 75 },
                { name: 'outbound|8000|v2|httpbin.bar.svc.cluster.local', weight: 25 },
              ],
            },
            retry_policy: { retry_on: 'connect-failure,503', num_retries: 2 },
          },
        },
      ],
    },
    { name: 'wild', domains: ['*.example.com'], routes: [{ match: { prefix: '/' }, direct_response: { status: 418, body: { inline_string: 'teapot' } } }] },
    {
      name: 'allow_any',
      domains: ['*'],
      routes: [{ name: 'allow_any', match: { prefix: '/' }, route: { cluster: 'PassthroughCluster', timeout: { seconds: 0 } } }],
    },
  ],
});

describe('route configuration', () => {
  test('virtual hosts by exact domain (port kept), wildcard suffix, then the catch-all', () => {
    expect(decide(request('httpbin.bar:8000'), ctx)).toMatchObject({ kind: 'cluster', virtualHost: 'httpbin.bar.svc.cluster.local:8000' });
    expect(decide(request('HTTPBIN.BAR.svc.cluster.local'), ctx)).toMatchObject({ virtualHost: 'httpbin.bar.svc.cluster.local:8000' });
    expect(decide(request('a.example.com'), ctx)).toMatchObject({ kind: 'direct-response', status: 418, body: 'teapot' });
    expect(decide(request('elsewhere:81'), ctx)).toMatchObject({ kind: 'cluster', cluster: 'PassthroughCluster', timeoutMs: 0 });
  });

  test('header matches, prefix rewrite with the query kept, timeouts, redirects', () => {
    expect(decide(request('httpbin.bar', '/ip', { 'end-user': 'jason' }), ctx)).toMatchObject({
      cluster: 'outbound|8000|v2|httpbin.bar.svc.cluster.local',
      timeoutMs: 15_000,
    });
    expect(decide(request('httpbin.bar', '/old/x?y=1'), ctx)).toMatchObject({ route: 'rewrite', path: '/new/x?y=1', timeoutMs: 3000 });
    expect(decide(request('httpbin.bar:8000', '/moved?q'), ctx)).toEqual({
      kind: 'redirect',
      virtualHost: 'httpbin.bar.svc.cluster.local:8000',
      route: 'moved',
      routeName: 'moved',
      status: 302,
      location: 'http://httpbin.bar:8000/here?q',
    });
  });

  test('weighted clusters follow the weights; retries are reported', () => {
    const pick = (random: number): unknown => (decide(request('httpbin.bar'), { random, scheme: 'http' }) as { cluster: string }).cluster;
    expect(pick(0)).toBe('outbound|8000|v1|httpbin.bar.svc.cluster.local');
    expect(pick(0.749)).toBe('outbound|8000|v1|httpbin.bar.svc.cluster.local');
    expect(pick(0.75)).toBe('outbound|8000|v2|httpbin.bar.svc.cluster.local');
    expect(decide(request('httpbin.bar'), ctx)).toMatchObject({ retry: { retryOn: ['connect-failure', '503'], numRetries: 2 } });
  });

  test('no virtual host or no route is a 404; a route without an action is refused at compile time', () => {
    const none = compileRouteConfiguration({ virtual_hosts: [{ name: 'only', domains: ['a'], routes: [{ match: { path: '/x' }, route: { cluster: 'c' } }] }] });
    expect(none(request('b'), ctx)).toEqual({ kind: 'no-route', status: 404 });
    expect(none(request('a', '/y'), ctx)).toEqual({ kind: 'no-route', status: 404, virtualHost: 'only' });
    expect(() => compileRouteConfiguration({ virtual_hosts: [{ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' } }] }] })).toThrow(
      /routes\[0\] has no action/,
    );
  });

  test('header edits of a route; fields the data plane does not implement are refused, named', () => {
    const edited = compileRouteConfiguration({
      virtual_hosts: [
        {
          name: 'v',
          domains: ['*'],
          routes: [
            {
              match: { prefix: '/' },
              route: { cluster: 'c' },
              request_headers_to_add: [
                { header: { key: 'X-Set', value: '1' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
                { header: { key: 'x-add', value: '2' }, append_action: 'APPEND_IF_EXISTS_OR_ADD' },
              ],
              request_headers_to_remove: ['X-Secret'],
              response_headers_to_add: [{ header: { key: 'x-served-by', value: 'mesh' } }],
            },
          ],
        },
      ],
    });
    expect(edited(request('a'), ctx)).toMatchObject({
      requestHeaders: { set: { 'x-set': '1' }, append: { 'x-add': '2' }, remove: ['x-secret'] },
      responseHeaders: { set: { 'x-served-by': 'mesh' } },
    });
    expect(() =>
      compileRouteConfiguration({
        virtual_hosts: [{ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'c' }, typed_per_filter_config: {} } as never] }],
      }),
    ).toThrow('virtual_hosts["v"].routes[0].typed_per_filter_config is not supported');
    expect(() =>
      compileRouteConfiguration({
        virtual_hosts: [{ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'c', request_mirror_policies: [] } as never }] }],
      }),
    ).toThrow('routes[0].route.request_mirror_policies is not supported');
  });

  test('a picked weighted cluster adds its header edits under the route: the route wins a conflict', () => {
    const split = compileRouteConfiguration({
      virtual_hosts: [
        {
          name: 'v',
          domains: ['*'],
          routes: [
            {
              match: { prefix: '/' },
              route: {
                weighted_clusters: {
                  clusters: [
                    {
                      name: 'v1',
                      weight: 50,
                      request_headers_to_add: [{ header: { key: 'x-version', value: 'v1' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }],
                      response_headers_to_add: [{ header: { key: 'x-served', value: 'v1' } }],
                      response_headers_to_remove: ['x-internal'],
                    },
                    { name: 'v2', weight: 50, request_headers_to_add: [{ header: { key: 'x-route', value: 'from-cluster' } }] },
                  ],
                },
              },
              request_headers_to_add: [{ header: { key: 'x-route', value: 'from-route' } }],
            },
          ],
        },
      ],
    });
    expect(split(request('a'), { random: 0, scheme: 'http' })).toMatchObject({
      cluster: 'v1',
      requestHeaders: { set: { 'x-version': 'v1', 'x-route': 'from-route' }, remove: [] },
      responseHeaders: { set: { 'x-served': 'v1' }, remove: ['x-internal'] },
    });
    expect(split(request('a'), { random: 0.5, scheme: 'http' })).toMatchObject({
      cluster: 'v2',
      requestHeaders: { set: { 'x-route': 'from-route' } },
      responseHeaders: { set: {}, remove: [] },
    });
  });

  test('require_tls redirects plain-text requests to https; unknown virtual host fields are refused', () => {
    const secure = compileRouteConfiguration({
      virtual_hosts: [{ name: 'v', domains: ['*'], require_tls: 'ALL', routes: [{ match: { prefix: '/' }, route: { cluster: 'c' } }] }],
    });
    expect(secure(request('a.example.com:8080', '/ip?x=1'), ctx)).toMatchObject({ kind: 'redirect', status: 301, location: 'https://a.example.com/ip?x=1' });
    expect(secure(request('a.example.com', '/ip'), { random: 0, scheme: 'https' })).toMatchObject({ kind: 'cluster' });
    expect(() => compileRouteConfiguration({ virtual_hosts: [{ name: 'v', domains: ['*'], cors: {} } as never] })).toThrow(
      'virtual_hosts["v"].cors is not supported',
    );
  });
});
