import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { ROUTE_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { clientRoutes, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// MESH_DEFAULT_REQUEST_TIMEOUT through real sockets: the client sidecar's routes as the daemon
// generates them with the setting, a VirtualService without a timeout of its own, and the real
// curl against a backend that answers late. The default (0s) lets a slow answer through; 300 ms
// turns it into the router's 504 with the UT flag; a route's own timeout still wins.
const SUBNET = 93;
const routeTimeout = (timeout?: string) => ({
  apiVersion: 'networking.mesh.io/v1',
  kind: 'VirtualService',
  metadata: { name: 'httpbin', namespace: 'bar' },
  spec: {
    hosts: ['httpbin.bar.svc.cluster.local'],
    http: [{ ...(timeout ? { timeout } : {}), route: [{ destination: { host: 'httpbin.bar.svc.cluster.local' } }] }],
  },
});

let mesh: TwoSidecars;
let version = 1;

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: [routeTimeout()] });
});

afterAll(async () => {
  await mesh?.close();
});

function useRoutes(defaultRequestTimeoutMs: number, virtualService: object): void {
  const routes = clientRoutes('PERMISSIVE', [virtualService], { defaultRequestTimeoutMs });
  expect(mesh.clientState.apply(ROUTE_TYPE, String(++version), keyResources(ROUTE_TYPE, routes))).toEqual({ ok: true });
}

const slow = (): ReturnType<typeof curl> => curl(['-x', mesh.proxyUrl, 'http://httpbin.bar:8000/delay/800']);

describe('MESH_DEFAULT_REQUEST_TIMEOUT', () => {
  test('unset (0s): a slow answer comes through', async () => {
    useRoutes(0, routeTimeout());
    expect((await slow()).code).toBe('200');
  });

  test('300ms: the route without a timeout answers 504 upstream request timeout; one with its own keeps it', async () => {
    useRoutes(300, routeTimeout());
    expect(await slow()).toMatchObject({ code: '504', body: 'upstream request timeout' });
    useRoutes(300, routeTimeout('5s'));
    expect((await slow()).code).toBe('200');
  });
});
