import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import type { MeshConfig } from '../crds/index.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { ECHO_SERVICE, ECHO_TCP_PORT, serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// The mesh config's access log (issue 38 item 1), through real sockets: the server sidecar's
// listeners as the daemon generates them with `accessLogFile`, requests from the client sidecar
// (mutual TLS) with the real curl, and plain TCP. A denied request's line names the policy and
// rule that denied it, in TEXT and JSON, as Envoy writes `rbac_access_denied_matched_policy`.
const SUBNET = 91;
const SERVER_APP = `127.${SUBNET}.2.2`;
const POLICIES = [
  ECHO_SERVICE,
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'deny-admin', namespace: 'bar' },
    spec: { selector: { matchLabels: { app: 'httpbin' } }, action: 'DENY', rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] },
  },
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'deny-plaintext-tcp', namespace: 'bar' },
    spec: {
      selector: { matchLabels: { app: 'httpbin' } },
      action: 'DENY',
      rules: [{ from: [{ source: { notNamespaces: ['foo'] } }], to: [{ operation: { ports: [String(ECHO_TCP_PORT)] } }] }],
    },
  },
];

let mesh: TwoSidecars;
let echo: Server;
let dir: string;
let version = 1;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'access-log-'));
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(ECHO_TCP_PORT, SERVER_APP, resolve));
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: POLICIES, serverPorts: [8000, ECHO_TCP_PORT] });
});

afterAll(async () => {
  await mesh?.close();
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** The server sidecar takes the listeners the daemon generates with this access log; returns the file. */
function useAccessLog(name: string, meshConfig: Partial<MeshConfig>, policies: readonly object[] = POLICIES): string {
  const file = join(dir, name);
  writeFileSync(file, '');
  const listeners = serverListeners('PERMISSIVE', policies, { meshConfig: { accessLogFile: file, ...meshConfig } });
  expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
  return file;
}

const linesOf = (file: string, count: number): Promise<string[]> =>
  waitFor(
    () => {
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '');
      return lines.length >= count ? lines : undefined;
    },
    { timeoutMs: 5_000, description: `${count} access-log lines in ${file}` },
  );

const viaClient = (path: string): ReturnType<typeof curl> => curl(['-x', mesh.proxyUrl, '-H', 'x-request-id: req-1', `http://httpbin.bar:8000${path}`]);

describe('access logs of the mesh config, written by the data plane', () => {
  test('JSON (the reference default fields): a denial names the policy and rule; an allowed request names its upstream', async () => {
    const file = useAccessLog('json.log', { accessLogEncoding: 'JSON' });
    expect((await viaClient('/admin')).code).toBe('403');
    expect((await viaClient('/status/201')).code).toBe('201');
    const [denied, allowed] = (await linesOf(file, 2)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(denied).toMatchObject({
      method: 'GET',
      path: '/admin',
      protocol: 'HTTP/1.1',
      response_code: 403,
      response_flags: null,
      response_code_details: 'rbac_access_denied_matched_policy[ns[bar]-policy[deny-admin]-rule[0]]',
      bytes_received: 0,
      bytes_sent: 'RBAC: access denied'.length,
      request_id: 'req-1',
      authority: 'httpbin.bar:8000',
      upstream_host: null,
      upstream_cluster: 'inbound|8000||',
      downstream_local_address: `${mesh.serverPod}:8000`,
      requested_server_name: 'outbound_.8000_._.httpbin.bar.svc.cluster.local',
    });
    expect(allowed).toMatchObject({
      path: '/status/201',
      response_code: 201,
      response_code_details: 'via_upstream',
      upstream_host: `${SERVER_APP}:8000`,
      upstream_cluster: 'inbound|8000||',
    });
    expect(typeof allowed?.['duration']).toBe('number');
    expect(Object.keys(denied ?? {})).toHaveLength(24);
  });

  test('TEXT with a format of its own (a newline added), and the reference default', async () => {
    const own = useAccessLog('own.log', { accessLogFormat: '%RESPONSE_CODE% %RESPONSE_CODE_DETAILS% %DOWNSTREAM_PEER_URI_SAN%' });
    await viaClient('/admin');
    expect(await linesOf(own, 1)).toEqual(['403 rbac_access_denied_matched_policy[ns[bar]-policy[deny-admin]-rule[0]] spiffe://cluster.local/ns/foo/sa/sleep']);
    const text = useAccessLog('text.log', {});
    await viaClient('/admin');
    const [line] = await linesOf(text, 1);
    expect(line).toMatch(
      /^\[\d{4}-\d\d-\d\dT[\d:.]+Z\] "GET \/admin HTTP\/1.1" 403 - rbac_access_denied_matched_policy\[ns\[bar\]-policy\[deny-admin\]-rule\[0\]\] - "-" 0 19 \d+ - "-" "curl\/[^"]+" "req-1" "httpbin.bar:8000" "-" inbound\|8000\|\| - /,
    );
  });

  test('TCP: a connection refused by a policy names it in the termination details; an allowed one counts its bytes', async () => {
    const format = { accessLogFormat: '%CONNECTION_TERMINATION_DETAILS% %BYTES_RECEIVED% %BYTES_SENT% %UPSTREAM_HOST% %PROTOCOL%' };
    const exchange = (): Promise<void> =>
      new Promise<void>((resolve) => {
        const socket = netConnect(ECHO_TCP_PORT, mesh.serverPod, () => socket.write('hello'));
        socket.once('data', () => socket.end());
        socket.on('error', () => resolve());
        socket.on('close', () => resolve());
      });
    const denied = useAccessLog('tcp.log', format, [ECHO_SERVICE, POLICIES[2] as object]);
    await exchange();
    expect(await linesOf(denied, 1)).toEqual(['rbac_access_denied_matched_policy[ns[bar]-policy[deny-plaintext-tcp]-rule[0]] 0 0 - -']);
    // A DENY rule's HTTP-only fields are dropped on TCP (it denies more, as the reference builds it): deny-admin denies port 9000 too.
    const broad = useAccessLog('tcp-broad.log', format);
    await exchange();
    expect(await linesOf(broad, 1)).toEqual(['rbac_access_denied_matched_policy[ns[bar]-policy[deny-admin]-rule[0]] 0 0 - -']);
    const open = useAccessLog('tcp-open.log', format, [ECHO_SERVICE]);
    await exchange();
    expect(await linesOf(open, 1)).toEqual([`- 5 5 ${SERVER_APP}:${ECHO_TCP_PORT} -`]);
  });
});
