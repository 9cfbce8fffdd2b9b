// BLOCKED_CIDRS_IN_JWKS_URIS against a user who writes a RequestAuthentication naming an internal
// address: a real loopback key server counts what reaches it, and the proxy's jwt_authn filter
// shows what it is given.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair } from 'jose';
import type { JwtRule } from '../../crds/index.js';
import { newMetrics, parseCidrList, type Cidr } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { waitFor } from '../../testing/wait-for.js';
import { newSidecarLdsGenerator } from '../generators/index.js';
import { buildCase, type CaseObject } from '../generators/testing/test-cases.js';
import { buildPushContext } from '../model/index.js';
import { generateRequest } from '../testing/generate-request.js';
import { metricValue } from '../testing/test-support.js';
import { newInboundSecurityFilters } from './index.js';
import { newJwksResolver, type JwksResolver, type JwksResolverOptions } from './jwks-resolver.js';

let server: Server;
let port: number;
let keySet: string;
const requests: string[] = [];

beforeAll(async () => {
  keySet = JSON.stringify({ keys: [{ ...(await exportJWK((await generateKeyPair('RS256')).publicKey)), alg: 'RS256', kid: 'k' }] });
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url === '/.well-known/openid-configuration' ? JSON.stringify({ jwks_uri: `http://127.0.0.1:${port}/jwks` }) : keySet);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function cidrs(text: string): readonly Cidr[] {
  const list = parseCidrList(text);
  if (!list.ok) throw new Error(`bad CIDR ${list.entry}`);
  return list.cidrs;
}

interface Harness {
  readonly jwks: JwksResolver;
  readonly log: LogEntry[];
  readonly failures: () => Promise<number>;
  readonly clock: FakeClock;
}

function harness(blocked: string, extra: Partial<JwksResolverOptions> = {}): Harness {
  const metrics = newMetrics('pilot-discovery');
  const log: LogEntry[] = [];
  const clock = new FakeClock();
  const jwks = newJwksResolver({
    refreshIntervalMs: 60_000,
    retryMs: 1000,
    timeoutMs: 2000,
    onChange: () => undefined,
    clock,
    log: newRecordingLogger(log),
    metrics,
    blockedCidrs: cidrs(blocked),
    ...extra,
  });
  return { jwks, log, clock, failures: () => metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total') };
}

const failedClosed = (jwks: JwksResolver, rule: JwtRule): boolean => JSON.parse(jwks.keySetFor(rule)).keys[0].kid === 'mesh-fail-closed';

/** Runs `body` and returns how many requests reached the key server meanwhile. */
async function requestsDuring(body: () => Promise<void>): Promise<number> {
  const before = requests.length;
  await body();
  return requests.length - before;
}

describe('BLOCKED_CIDRS_IN_JWKS_URIS', () => {
  test('127.0.0.0/8 keeps the daemon from fetching http://127.0.0.1:<port>/jwks: no request, a failure, fail closed', async () => {
    const { jwks, log, failures } = harness('10.0.0.0/8, 127.0.0.0/8');
    const uri = `http://127.0.0.1:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(0);
    expect(failedClosed(jwks, { jwksUri: uri })).toBe(true);
    expect(await failures()).toBe(1);
    expect(log.find((entry) => entry.level === 'warn')?.fields).toMatchObject({ uri, address: '127.0.0.1', cidr: '127.0.0.0/8' });
    jwks.close();
  });

  test('with the setting empty the same URI is fetched and inlined', async () => {
    const { jwks, failures } = harness('');
    const uri = `http://127.0.0.1:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(1);
    expect(jwks.keySetFor({ jwksUri: uri })).toBe(keySet);
    expect(await failures()).toBe(0);
    jwks.close();
  });

  test('an address outside every range is fetched', async () => {
    const { jwks } = harness('10.0.0.0/8,192.168.0.0/16,::1/128');
    const uri = `http://127.0.0.1:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(1);
    expect(jwks.keySetFor({ jwksUri: uri })).toBe(keySet);
    jwks.close();
  });

  test.each([
    ['an IPv4-mapped IPv6 literal', `[::ffff:127.0.0.1]`, '127.0.0.0/8', '::ffff:7f00:1'],
    ['an IPv4 range written as IPv4-mapped IPv6', '127.0.0.1', '::ffff:127.0.0.0/104', '127.0.0.1'],
    ['an IPv6 literal', '[::1]', '::1/128', '::1'],
  ])('%s is blocked', async (_name, host, blocked, address) => {
    const { jwks, log } = harness(blocked);
    const uri = `http://${host}:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(0);
    expect(failedClosed(jwks, { jwksUri: uri })).toBe(true);
    expect(log.find((entry) => entry.level === 'warn')?.fields).toMatchObject({ address, cidr: blocked });
    jwks.close();
  });

  test('a hostname is refused when any of its addresses is blocked, not only the first', async () => {
    const looked: string[] = [];
    const resolve = async (host: string): Promise<string[]> => (looked.push(host), ['203.0.113.7', '127.0.0.1']);
    const { jwks, log } = harness('127.0.0.0/8', { resolve });
    const uri = `http://keys.attacker.example:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(0);
    expect(looked).toEqual(['keys.attacker.example']);
    expect(failedClosed(jwks, { jwksUri: uri })).toBe(true);
    expect(log.find((entry) => entry.level === 'warn')?.fields).toMatchObject({ uri, address: '127.0.0.1', cidr: '127.0.0.0/8' });
    jwks.close();
  });

  test('localhost, resolved by the system, is blocked by 127.0.0.0/8 and ::1/128', async () => {
    const { jwks } = harness('127.0.0.0/8,::1/128');
    const uri = `http://localhost:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(0);
    expect(failedClosed(jwks, { jwksUri: uri })).toBe(true);
    jwks.close();
  });

  test("the issuer's discovery document is held to the same ranges", async () => {
    const { jwks } = harness('127.0.0.0/8');
    expect(await requestsDuring(() => jwks.refresh(`issuer:http://127.0.0.1:${port}`))).toBe(0);
    expect(failedClosed(jwks, { issuer: `http://127.0.0.1:${port}` })).toBe(true);
    jwks.close();
  });

  test('a rebinding name is checked again at each refresh: once blocked, nothing more is fetched', async () => {
    // The name first resolves outside the ranges (the fetch reaches the loopback server through
    // the injected fetch, as the attacker's first DNS answer would), then into 10.0.0.0/8.
    let answer = ['198.51.100.10'];
    const resolve = async (): Promise<string[]> => answer;
    const viaLoopback: typeof fetch = (input, init) => {
      const url = new URL(String(input));
      url.hostname = '127.0.0.1';
      return fetch(url, init);
    };
    const { jwks, clock, failures } = harness('10.0.0.0/8', { resolve, fetch: viaLoopback });
    const uri = `http://keys.rebind.example:${port}/jwks`;
    expect(await requestsDuring(() => jwks.refresh(uri))).toBe(1);
    expect(jwks.keySetFor({ jwksUri: uri })).toBe(keySet);
    answer = ['10.0.0.1'];
    const before = requests.length;
    clock.advance(60_000);
    await waitFor(async () => (await failures()) === 1, { description: 'the timed refresh, refused' });
    expect(requests.length).toBe(before);
    // As after any failed refresh, the last key set fetched stays until one succeeds.
    expect(jwks.keySetFor({ jwksUri: uri })).toBe(keySet);
    jwks.close();
  });
});

describe('what the proxy receives', () => {
  const objects = (uri: string): CaseObject[] => [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'httpbin', namespace: 'bar' },
      spec: { clusterIP: '10.96.0.10', selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000 }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'httpbin-1', namespace: 'bar', labels: { app: 'httpbin' } },
      spec: { serviceAccountName: 'httpbin', containers: [{ name: 'httpbin', ports: [{ containerPort: 8000 }] }] },
      status: { podIP: '10.0.0.2' },
    },
    {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'RequestAuthentication',
      metadata: { name: 'jwt', namespace: 'bar' },
      spec: { selector: { matchLabels: { app: 'httpbin' } }, jwtRules: [{ issuer: 'attacker', jwksUri: uri }] },
    },
    { kind: 'ProxyNode', id: 'sidecar~10.0.0.2~httpbin-1.bar~bar.svc.cluster.local', metadata: { NAMESPACE: 'bar', SERVICE_ACCOUNT: 'httpbin' } },
  ];

  /** The key sets inlined in the inbound jwt_authn filters of the sidecar's listeners. */
  function inlinedKeySets(jwks: JwksResolver, uri: string): string[] {
    const { model, proxy } = buildCase(objects(uri), 'blocked-cidrs');
    const generator = newSidecarLdsGenerator({ securityFilters: newInboundSecurityFilters({ jwks }), peerAuthentication: true });
    const generated = generator.generate(proxy, buildPushContext(model), generateRequest({ names: [], full: true, configsUpdated: [] }));
    const listeners = (generated?.resources ?? []).map((named) => (typeof named.resource === 'function' ? named.resource() : named.resource));
    const found = new Set<string>();
    JSON.stringify(listeners, (key, value: unknown) => {
      if (key === 'local_jwks') found.add((value as { inline_string: string }).inline_string);
      return value;
    });
    return [...found];
  }

  test('a blocked jwksUri gives the fail-closed key set; an unblocked one the served set', async () => {
    const uri = `http://127.0.0.1:${port}/jwks`;
    const blocked = harness('127.0.0.0/8');
    await blocked.jwks.refresh(uri);
    const refused = inlinedKeySets(blocked.jwks, uri);
    expect(refused).toHaveLength(1);
    expect(JSON.parse(refused[0] ?? '{}').keys[0].kid).toBe('mesh-fail-closed');
    blocked.jwks.close();

    const open = harness('');
    await open.jwks.refresh(uri);
    expect(inlinedKeySets(open.jwks, uri)).toEqual([keySet]);
    open.jwks.close();
  });
});
