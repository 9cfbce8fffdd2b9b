import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// PILOT_HTTP10 through real sockets: Envoy's HTTP/1 codec answers an HTTP/1.0 request 426
// Upgrade Required unless the connection manager accepts HTTP/1.0, which the daemon turns on
// for every connection manager of a proxy with the setting (or the proxy's HTTP10 metadata).
// The real curl speaks HTTP/1.0 with -0, plain text to the server sidecar (PERMISSIVE).
const SUBNET = 94;

let mesh: TwoSidecars;
let version = 1;

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE' });
});

afterAll(async () => {
  await mesh?.close();
});

const http10 = (): ReturnType<typeof curl> => curl(['-0', '-D', '-', `http://${mesh.serverPod}:8000/ip`]);

describe('HTTP/1.0 at a sidecar', () => {
  test('refused by default: 426, the connection closed; HTTP/1.1 is served', async () => {
    const refused = await http10();
    expect(refused.code).toBe('426');
    expect(refused.body).toMatch(/^connection: close\r$/im);
    expect((await curl([`http://${mesh.serverPod}:8000/ip`])).code).toBe('200');
  });

  test('PILOT_HTTP10: the generated connection managers accept it, and it is served', async () => {
    const listeners = serverListeners('PERMISSIVE', [], { acceptHttp10: true });
    expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
    const served = await http10();
    expect(served.code).toBe('200');
    expect(served.body).toMatch(/^HTTP\/1\.[01] 200/);
  });
});
