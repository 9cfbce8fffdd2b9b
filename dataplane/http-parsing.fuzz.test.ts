import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../testing/fuzz.js';
import { rawExchange } from '../testing/raw-http.js';
import { LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { ATTACK_SEGMENTS, envoyPath, hcmPathOptions, MODES, type Mode } from './testing/envoy-path-model.js';
import { SERVER_PORT, serverListeners, startTwoSidecars, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// The data plane's HTTP parsing over real sockets: a server sidecar (PERMISSIVE, so plain text is
// served) with an AuthorizationPolicy DENY on /admin. Random request lines and headers get an
// answer or a close, never a crash or a handler failure (500 "internal error"); under each
// mesh path normalization mode, a path reaches the backend exactly as Envoy would forward it
// (the model in testing/envoy-path-model.ts), and one Envoy would deny is denied.
const DENY_ADMIN = {
  apiVersion: 'security.mesh.io/v1beta1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'deny-admin', namespace: 'bar' },
  spec: { selector: { matchLabels: { app: 'httpbin' } }, action: 'DENY', rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] },
};

let mesh: TwoSidecars;
let version = 1;

beforeAll(async () => {
  mesh = await startTwoSidecars({ subnet: 73, mode: 'PERMISSIVE', serverPolicies: [DENY_ADMIN] });
});

afterAll(async () => {
  await mesh?.close();
});

/** The server sidecar's listeners with every HTTP connection manager set to `mode`. */
function useMode(mode: Mode): void {
  const withMode = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(withMode);
    if (typeof value !== 'object' || value === null) return value;
    const entries = Object.entries(value).map(([key, item]) => [key, withMode(item)] as const);
    const copy: Record<string, unknown> = Object.fromEntries(entries);
    if (typeof copy['@type'] === 'string' && copy['@type'].endsWith('HttpConnectionManager')) {
      for (const field of ['normalize_path', 'merge_slashes', 'path_with_escaped_slashes_action']) delete copy[field];
      Object.assign(copy, hcmPathOptions(mode));
    }
    return copy;
  };
  const listeners = withMode(serverListeners('PERMISSIVE', [DENY_ADMIN])) as Record<string, unknown>[];
  expect(mesh.serverState.apply(LISTENER_TYPE, String(++version), keyResources(LISTENER_TYPE, listeners))).toEqual({ ok: true });
}

async function get(target: string): Promise<{ status: number; url?: string; text: string }> {
  const { status, text } = await rawExchange(mesh.serverPod, SERVER_PORT, `GET ${target} HTTP/1.1\r\nHost: httpbin.bar:8000\r\nConnection: close\r\n\r\n`);
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const url = status === 200 ? (JSON.parse(body) as { url: string }).url : undefined;
  return url === undefined ? { status, text } : { status, url, text };
}

/** Envoy's answer for `path` in `mode`: 403 when its normalized path is /admin, else forwarded as normalized. */
function envoyAnswer(mode: Mode, path: string): { status: 403 } | { status: 200; url: string } {
  const forwarded = envoyPath(mode, path);
  return forwarded === '/admin' ? { status: 403 } : { status: 200, url: forwarded };
}

const VARIANTS = [
  '/admin',
  '/./admin',
  '//admin',
  '/admin/../admin',
  '/%61dmin',
  '/%2e/admin',
  '/a/..%2fadmin',
  '/%2Fadmin',
  '/admin/',
  '/ADMIN',
  '/admin;x',
  '/\\admin',
  '/%5cadmin',
  '/%%36%31dmin',
  '/x/%2E%2E/admin',
  '/admin/.',
  '/%2e%2e/admin',
];
const attackPath = fc.array(fc.constantFrom(...ATTACK_SEGMENTS), { minLength: 1, maxLength: 5 }).map((segments) => `/${segments.join('/')}`);

describe.each(MODES)('pathNormalization %s over a socket, DENY on /admin', (mode) => {
  beforeAll(() => useMode(mode));

  test.each(VARIANTS)('%s is answered as Envoy would', async (path) => {
    const { status, url } = await get(path);
    expect(url === undefined ? { status } : { status, url }).toEqual(envoyAnswer(mode, path));
  });

  test('random paths of attack segments: denied when Envoy denies, else forwarded as Envoy forwards', async () => {
    await fc.assert(
      fc.asyncProperty(attackPath, async (path) => {
        const { status, url } = await get(path);
        expect(url === undefined ? { status } : { status, url }).toEqual(envoyAnswer(mode, path));
      }),
      fuzzParameters({ numRuns: 25, longRuns: 2000 }),
    );
  });
});

const TOKEN = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
const headerName = fc.oneof(
  fc.constantFrom(
    'Host',
    'host',
    'HOST',
    'Content-Length',
    'Transfer-Encoding',
    'Authorization',
    'X-Forwarded-Client-Cert',
    'Cookie',
    'Connection',
    'Upgrade',
    'Expect',
    ':path',
    'x-request-id',
  ),
  TOKEN,
  fc.string({ unit: 'binary-ascii', maxLength: 8 }),
);
const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    'chunked',
    'chunked, identity',
    'close',
    'h2c',
    '100-continue',
    'a\0b',
    'a\r\n folded',
    'a\r\n\tfolded',
    'Bearer x.y.z',
    '1, 2',
  ),
  fc.integer({ min: 1000, max: 70_000 }).map((length) => 'v'.repeat(length)),
);
const requestLine = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS', 'CONNECT', 'PUT', 'DELETE', 'PRI', 'get'),
      fc.oneof(attackPath, fc.string({ maxLength: 20 }), fc.constantFrom('*', 'http://httpbin.bar:8000/admin', 'httpbin.bar:8000', '/admin#x', '/admin?x=1')),
      fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'http/1.1', ''),
    )
    .map((parts) => parts.join(' ')),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
);
const rawRequest = fc
  .record({
    line: requestLine,
    headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
    host: fc.boolean(),
    body: fc.string({ maxLength: 20 }),
    cut: fc.option(fc.nat()),
  })
  .map(({ line, headers, host, body, cut }) => {
    const text = `${line}\r\n${host ? 'Host: httpbin.bar:8000\r\n' : ''}${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
    return cut === null ? text : text.slice(0, cut % (text.length + 1));
  });

describe('random requests over a socket', () => {
  beforeAll(() => useMode('BASE'));

  test('every request gets an answer or a close, never a handler failure, and the sidecar keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequest, async (request) => {
        // Half-closed after the bytes: a request still incomplete (cut short, a body shorter than
        // its Content-Length, only empty lines) is otherwise rightly waited for.
        const { status, text } = await rawExchange(mesh.serverPod, SERVER_PORT, Buffer.from(request, 'latin1'), { halfClose: true, untilHead: true });
        expect(status === 500 && text.endsWith('internal error')).toBe(false);
      }),
      fuzzParameters({ numRuns: 60, longRuns: 5000 }),
    );
    expect((await get('/ip')).status).toBe(200);
    expect((await get('/admin')).status).toBe(403);
  });

  test('only empty lines before the request line are waited on, then the request is served', async () => {
    const { status } = await rawExchange(mesh.serverPod, SERVER_PORT, '\r\n\r\nGET /ip HTTP/1.1\r\nHost: httpbin.bar:8000\r\nConnection: close\r\n\r\n');
    expect(status).toBe(200);
  });
});
