import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { curl } from '../testing/curl.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// PILOT_JWT_ENABLE_REMOTE_JWKS through real sockets: a RequestAuthentication whose jwksUri is the
// mesh Service jwks.auth, a real key set server on loopback behind it, and the real curl through
// both sidecars with a token it signs. The fixture's daemon fetches nothing itself, so by default
// it inlines an empty set and the token is refused; with the setting the server sidecar gets
// remote_jwks, fetches the set through the Service's cluster once, keeps it, and the token passes.
const SUBNET = 98;
const JWKS_ADDRESS = `127.${SUBNET}.3.3`;
const ISSUER = 'https://issuer.example';

let mesh: TwoSidecars;
let jwksServer: Server;
let fetches = 0;
let privateKey: CryptoKey;
let policies: object[];
let version = 1;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const keySet = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
  jwksServer = createServer((req, res) => {
    fetches += 1;
    if (req.url !== '/keys') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(keySet);
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, JWKS_ADDRESS, resolve));
  const port = (jwksServer.address() as AddressInfo).port;
  const selector = { matchLabels: { app: 'httpbin' } };
  policies = [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'jwks', namespace: 'auth' },
      spec: { clusterIP: '10.96.0.30', selector: { app: 'jwks' }, ports: [{ name: 'http', port, targetPort: port }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'jwks-1', namespace: 'auth', labels: { app: 'jwks' } },
      spec: { serviceAccountName: 'jwks', containers: [{ name: 'jwks', ports: [{ containerPort: port }] }] },
      status: { podIP: JWKS_ADDRESS },
    },
    {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'RequestAuthentication',
      metadata: { name: 'jwt', namespace: 'bar' },
      spec: { selector, jwtRules: [{ issuer: ISSUER, jwksUri: `http://jwks.auth.svc.cluster.local:${port}/keys` }] },
    },
    {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'require-jwt', namespace: 'bar' },
      spec: { selector, action: 'ALLOW', rules: [{ from: [{ source: { requestPrincipals: [`${ISSUER}/*`] } }] }] },
    },
  ];
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: policies });
});

afterAll(async () => {
  await mesh?.close();
  await new Promise((resolve) => jwksServer?.close(resolve));
});

const token = (): Promise<string> =>
  new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setSubject('sleep').setIssuedAt().setExpirationTime('1h').sign(privateKey);

async function withToken(): Promise<{ code: string; body: string }> {
  return curl(['-x', mesh.proxyUrl, '-H', `authorization: Bearer ${await token()}`, 'http://httpbin.bar:8000/ip']);
}

describe('PILOT_JWT_ENABLE_REMOTE_JWKS', () => {
  test('off (default): the daemon inlines the key set it has (none here); the token is refused, nothing is fetched by the proxy', async () => {
    expect(await withToken()).toMatchObject({ code: '401' });
    expect(fetches).toBe(0);
  });

  test('on: the server sidecar fetches the key set through the mesh cluster once and keeps it; tokens pass, none is still 403', async () => {
    const listeners = serverListeners('PERMISSIVE', policies, { remoteJwks: true });
    expect(JSON.stringify(listeners)).toContain('"remote_jwks"');
    expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
    expect((await withToken()).code).toBe('200');
    expect((await withToken()).code).toBe('200');
    expect(fetches).toBe(1);
    expect((await curl(['-x', mesh.proxyUrl, 'http://httpbin.bar:8000/ip'])).code).toBe('403');
  });

  test('on, the key set server gone: a new provider cannot fetch, and the token is refused 401 "Jwks remote fetch is failed"', async () => {
    await new Promise((resolve) => jwksServer.close(resolve));
    // New listeners compile a new provider, whose key set is not fetched yet.
    const listeners = serverListeners('PERMISSIVE', policies, { remoteJwks: true });
    expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
    expect(await withToken()).toMatchObject({ code: '401', body: 'Jwks remote fetch is failed' });
  });
});
