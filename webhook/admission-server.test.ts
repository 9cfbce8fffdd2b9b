import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newMetrics, newNopLogger, type MeshMetrics } from '../runtime/index.js';
import { curl } from '../testing/curl.js';
import { certificateAuthority, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { newAdmissionServer, type AdmissionServer } from './admission-server.js';
import { newValidationRoute } from './validation-webhook.js';
import type { ServingIdentity, ServingKeyCertificate } from './serving-identity.js';

const SAN = 'DNS:meshd.mesh-system.svc,IP:127.0.0.1';

/** An identity the test renews by hand. */
function manualIdentity(first: ServingKeyCertificate): ServingIdentity & { renew(next: ServingKeyCertificate): void } {
  const listeners = new Set<(identity: ServingKeyCertificate) => void>();
  let current = first;
  return {
    watch(listener) {
      listeners.add(listener);
      queueMicrotask(() => listeners.has(listener) && listener(current));
      return () => listeners.delete(listener);
    },
    renew(next) {
      current = next;
      for (const listener of listeners) listener(next);
    },
  };
}

const keyCert = (pair: KeyAndCert): ServingKeyCertificate => ({
  certChainPem: readFileSync(pair.certFile, 'utf8'),
  keyPem: readFileSync(pair.keyFile, 'utf8'),
});

function review(object: unknown, overrides: Record<string, unknown> = {}, apiVersion = 'admission.k8s.io/v1'): string {
  return JSON.stringify({
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: 'security.mesh.io', version: 'v1beta1', kind: 'AuthorizationPolicy' },
      resource: { group: 'security.mesh.io', version: 'v1beta1', resource: 'authorizationpolicies' },
      namespace: 'foo',
      name: 'p',
      operation: 'CREATE',
      object,
      ...overrides,
    },
  });
}

const policy = (spec: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'security.mesh.io/v1beta1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'p', namespace: 'foo' },
  spec,
  ...extra,
});

async function counter(metrics: MeshMetrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  const values = (await metric?.get())?.values ?? [];
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((sum, v) => sum + v.value, 0);
}

describe('the admission server on --httpsAddr', () => {
  let dir: string;
  let ca: KeyAndCert;
  let identity: ReturnType<typeof manualIdentity>;
  let server: AdmissionServer;
  let metrics: MeshMetrics<'pilot-discovery'>;
  const stop = new AbortController();
  let running: Promise<void>;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'admission-'));
    ca = await certificateAuthority(dir, 'mesh-root');
    identity = manualIdentity(keyCert(await signedCertificate(dir, 'meshd-1', SAN, ca)));
    metrics = newMetrics('pilot-discovery');
    const route = newValidationRoute({ metrics, log: newNopLogger() });
    server = newAdmissionServer({
      address: { host: '127.0.0.1', port: 0 },
      identity: () => Promise.resolve(identity),
      routes: new Map([['/validate', route]]),
      log: newNopLogger(),
    });
    running = server.start(stop.signal);
    await server.waitForReady();
    url = `https://127.0.0.1:${server.boundAddress().port}`;
  });

  afterAll(async () => {
    stop.abort();
    await running;
    rmSync(dir, { recursive: true, force: true });
  });

  let bodies = 0;
  const post = (body: string, contentType = 'application/json', path = '/validate') => {
    const file = join(dir, `body-${++bodies}.json`);
    writeFileSync(file, body);
    return curl(['--cacert', ca.certFile, '-X', 'POST', '-H', `Content-Type: ${contentType}`, '--data-binary', `@${file}`, `${url}${path}`]);
  };

  test('an empty body is 400 "no body found"; another Content-Type is 415; both counted', async () => {
    const empty = await curl(['--cacert', ca.certFile, '-X', 'POST', '-H', 'Content-Type: application/json', `${url}/validate`]);
    expect([empty.code, empty.body]).toEqual(['400', 'no body found\n']);
    const yaml = await post(review(policy({})), 'application/yaml');
    expect([yaml.code, yaml.body]).toEqual(['415', 'invalid Content-Type, want `application/json`\n']);
    expect(await counter(metrics, 'galley_validation_http_error', { status: '400' })).toBe(1);
    expect(await counter(metrics, 'galley_validation_http_error', { status: '415' })).toBe(1);
  });

  test('a body over 6 MiB is refused with 400 before it is read whole, with or without a length', async () => {
    const huge = Buffer.alloc(7 * 1024 * 1024, 'a');
    for (const chunked of [false, true]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${url}/validate`,
          {
            method: 'POST',
            ca: readFileSync(ca.certFile),
            headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': huge.length }) },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(huge);
      });
      expect(answer).toEqual({ status: 400, body: 'Request entity too large: limit is 6291456\n' });
    }
  });

  test('undecodable JSON is answered as a denial, in v1', async () => {
    const answer = await post('{"apiVersion": "admission.k8s.io/v1", ');
    expect(answer.code).toBe('200');
    const body = JSON.parse(answer.body) as { apiVersion: string; response: { allowed: boolean; status: { message: string } } };
    expect(body.apiVersion).toBe('admission.k8s.io/v1');
    expect(body.response.allowed).toBe(false);
    expect(body.response.status.message).toMatch(/^could not decode body: /);
  });

  test('a v1beta1 review is answered in v1beta1 with its UID; a valid policy passes', async () => {
    for (const version of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
      const answer = await post(
        review(
          policy({ action: 'ALLOW', rules: [{ from: [{ source: { principals: ['cluster.local/ns/foo/sa/sleep'] } }] }] }),
          { uid: `u-${version}` },
          version,
        ),
      );
      expect(JSON.parse(answer.body)).toEqual({ apiVersion: version, kind: 'AdmissionReview', response: { uid: `u-${version}`, allowed: true } });
    }
    expect(await counter(metrics, 'galley_validation_passed', { group: 'security.mesh.io', resource: 'authorizationpolicies' })).toBe(2);
  });

  test('an invalid policy is denied with every problem and its field path', async () => {
    const answer = await post(review(policy({ action: 'ALLOW', rules: [{ to: [{ operation: { methods: [''], paths: [''] } }] }] })));
    const { response } = JSON.parse(answer.body) as { response: { allowed: boolean; status: { message: string } } };
    expect(response.allowed).toBe(false);
    expect(response.status.message).toMatch(/^configuration is invalid: spec\.rules\[0\]\./);
    expect(response.status.message.split('; ').length).toBeGreaterThanOrEqual(2);
    expect(await counter(metrics, 'galley_validation_failed', { reason: 'invalid_resource' })).toBe(1);
  });

  test('warnings come back in response.warnings', async () => {
    const answer = await post(review(policy({ action: 'DENY', rules: [{ to: [{ operation: { methods: ['GET'] } }] }] })));
    const { response } = JSON.parse(answer.body) as { response: { allowed: boolean; warnings: string[] } };
    expect(response.allowed).toBe(true);
    expect(response.warnings.join('\n')).toMatch(/DENY rule uses HTTP-only fields/);
  });

  test('an unknown top-level field, an unknown kind and an undecodable object are refused with their reasons', async () => {
    const extra = JSON.parse((await post(review(policy({}, { extra: 1 })))).body) as { response: { status: { message: string } } };
    expect(extra.response.status.message).toBe('unknown field "extra" on AuthorizationPolicy resource foo/p');
    const other = JSON.parse((await post(review({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }))).body) as {
      response: { status: { message: string } };
    };
    expect(other.response.status.message).toBe('unrecognized type ConfigMap');
    const none = JSON.parse((await post(review('not an object'))).body) as { response: { status: { message: string } } };
    expect(none.response.status.message).toMatch(/^cannot decode configuration: /);
    expect(await counter(metrics, 'galley_validation_failed', { reason: 'unknown_type' })).toBe(1);
    expect(await counter(metrics, 'galley_validation_failed', { reason: 'yaml_decode_error' })).toBe(1);
  });

  test('operations other than CREATE and UPDATE are allowed unchecked', async () => {
    const answer = JSON.parse((await post(review(policy({ action: 'BOGUS' }), { operation: 'DELETE' }))).body) as { response: { allowed: boolean } };
    expect(answer.response.allowed).toBe(true);
    expect(await counter(metrics, 'galley_validation_failed', { reason: 'unsupported_operation' })).toBe(1);
  });

  test('deeply nested JSON is a denial and the server keeps serving', async () => {
    const depth = 200_000;
    const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const answer = await post(review('NESTED-OBJECT').replace('"NESTED-OBJECT"', nested));
    expect(answer.code).toBe('200');
    expect((JSON.parse(answer.body) as { response: { allowed: boolean } }).response.allowed).toBe(false);
    expect((await post(review(policy({})))).code).toBe('200');
  });

  test('a client that waits for 100 Continue gets the 400 for an oversized body before sending it, and a Continue for one that fits', async () => {
    const file = join(dir, 'huge.json');
    writeFileSync(file, Buffer.alloc(7 * 1024 * 1024, 'a'));
    const ask = [
      '--cacert',
      ca.certFile,
      '-v',
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '-H',
      'Expect: 100-continue',
      '--data-binary',
      `@${file}`,
      `${url}/validate`,
    ];
    const refused = await curl(ask);
    expect([refused.exit, refused.code, refused.body]).toEqual([0, '400', 'Request entity too large: limit is 6291456\n']);
    // As the reference answers: no invitation to upload what will be refused unread.
    expect(refused.stderr).not.toMatch(/< HTTP\/1\.1 100/);
    writeFileSync(file, review(policy({})));
    const answered = await curl(ask);
    expect([answered.exit, answered.code]).toEqual([0, '200']);
    expect(answered.stderr).toMatch(/< HTTP\/1\.1 100/);
    expect(JSON.parse(answered.body)).toMatchObject({ response: { allowed: true } });
  });

  test('an unknown path is 404', async () => {
    expect((await post(review(policy({})), 'application/json', '/nothing')).code).toBe('404');
  });

  test('a renewed certificate is served to new connections without a restart', async () => {
    const serial = async (): Promise<string> =>
      (await curl(['--cacert', ca.certFile, '-v', '-X', 'POST', `${url}/validate`])).stderr.match(/subject: (.*)/)?.[1] ?? '';
    expect(await serial()).toMatch(/CN=meshd-1/);
    identity.renew(keyCert(await signedCertificate(dir, 'meshd-2', SAN, ca)));
    expect(await serial()).toMatch(/CN=meshd-2/);
  });
});
