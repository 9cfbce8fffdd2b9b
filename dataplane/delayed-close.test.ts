import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { clientListeners, serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// PILOT_HTTP_DELAYED_CLOSE_TIMEOUT reaches both sidecars' connection managers and they take it:
// the data plane checks the duration and serves on (it does not model the grace period itself:
// Node closes a connection as soon as its last response is written). A malformed one is refused.
const SUBNET = 97;

let mesh: TwoSidecars;
let version = 1;

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE' });
});

afterAll(async () => {
  await mesh?.close();
});

describe('PILOT_HTTP_DELAYED_CLOSE_TIMEOUT', () => {
  test.each([0, 250])('%d ms: the generated listeners are taken on both sides, and requests through both are served', async (delayedCloseTimeoutMs) => {
    const daemon = { delayedCloseTimeoutMs };
    const server = serverListeners('PERMISSIVE', [], daemon);
    expect(JSON.stringify(server)).toContain('"delayed_close_timeout"');
    expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, server))).toEqual({ ok: true });
    expect(mesh.clientState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, clientListeners('PERMISSIVE', [], daemon)))).toEqual({
      ok: true,
    });
    expect((await curl(['-x', mesh.proxyUrl, 'http://httpbin.bar:8000/ip'])).code).toBe('200');
  });

  test('a malformed duration is refused by name', () => {
    const listeners = serverListeners('PERMISSIVE', [], { delayedCloseTimeoutMs: 0 }).map((listener) =>
      JSON.parse(JSON.stringify(listener).replace(/"delayed_close_timeout":\{[^}]*\}/g, '"delayed_close_timeout":{"seconds":-1}')),
    );
    const result = mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners));
    expect(result).toMatchObject({ ok: false });
    expect(JSON.stringify(result)).toContain('delayed_close_timeout');
  });
});
