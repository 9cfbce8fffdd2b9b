import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { clientListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// PILOT_SIDECAR_USE_REMOTE_ADDRESS through real sockets: the client sidecar's outbound connection
// managers as the daemon generates them, and the real curl from its own loopback address. With
// use_remote_address the client sidecar appends the app's connection to x-forwarded-for (its
// own pod address, the peer being loopback) and names the peer in x-envoy-external-address, as
// Envoy does for a request from an address that is not internal; the app behind the server
// sidecar sees both. Without it neither header is made up.
const SUBNET = 95;
const CURL_SOURCE = `127.${SUBNET}.9.9`;

let mesh: TwoSidecars;
let version = 1;

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE' });
});

afterAll(async () => {
  await mesh?.close();
});

function useListeners(sidecarUseRemoteAddress: boolean): void {
  const listeners = clientListeners('PERMISSIVE', [], { sidecarUseRemoteAddress });
  expect(mesh.clientState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
}

/** The headers the app received. */
async function appHeaders(extra: readonly string[] = []): Promise<Record<string, string>> {
  const answer = await curl(['-x', mesh.proxyUrl, '--interface', CURL_SOURCE, ...extra, 'http://httpbin.bar:8000/headers']);
  expect(answer.code).toBe('200');
  return (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
}

describe('PILOT_SIDECAR_USE_REMOTE_ADDRESS', () => {
  test('off (default): no x-forwarded-for or external address is made up; a client-sent one passes', async () => {
    useListeners(false);
    const headers = await appHeaders();
    expect(headers['x-forwarded-for']).toBeUndefined();
    expect(headers['x-envoy-external-address']).toBeUndefined();
    expect((await appHeaders(['-H', 'x-forwarded-for: 203.0.113.9']))['x-forwarded-for']).toBe('203.0.113.9');
  });

  test('on: the client sidecar appends its pod address for the loopback peer and names the peer as the external address', async () => {
    useListeners(true);
    const headers = await appHeaders();
    expect(headers['x-forwarded-for']).toBe(mesh.clientPod);
    expect(headers['x-envoy-external-address']).toBe(CURL_SOURCE);
  });

  test('on: what the app claims is appended to, never trusted; trusted x-envoy headers of an external request are dropped', async () => {
    useListeners(true);
    const headers = await appHeaders([
      '-H',
      'x-forwarded-for: 203.0.113.9',
      '-H',
      'x-envoy-external-address: 198.51.100.1',
      '-H',
      'x-envoy-internal: true',
      '-H',
      'x-envoy-upstream-rq-timeout-ms: 5',
    ]);
    expect(headers['x-forwarded-for']).toBe(`203.0.113.9,${mesh.clientPod}`);
    expect(headers['x-envoy-external-address']).toBe(CURL_SOURCE);
    expect(headers['x-envoy-internal']).toBeUndefined();
    expect(headers['x-envoy-upstream-rq-timeout-ms']).toBeUndefined();
  });
});
