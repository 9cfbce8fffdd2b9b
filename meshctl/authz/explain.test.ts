import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { envoyConfigDump } from '../../dataplane/admin-config-dump.js';
import { simulateYaml } from '../../dataplane/testing/simulation-support.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { expectGoldenText } from '../../testing/golden.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import type { EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import { explainRequest, type ExplainRequest } from './explain.js';
import { renderExplanation } from './render-explanation.js';

// x authz explain over the config dump of a proxy whose config the daemon's generators built from
// YAML, written out as the data plane's admin API writes it: the dump is all explain sees.
const ISSUER = 'testing@secure.mesh.io';
const NOW = new Date('2026-11-22T12:00:00Z');
let protos: EnvoyProtos;
let dir: string;
let privateKey: CryptoKey;
let jwks: string;

const WORKLOADS = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec: { clusterIP: 10.96.0.10, selector: { app: httpbin }, ports: [{ name: http, port: 8000, targetPort: 80 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: httpbin-1, namespace: foo, labels: { app: httpbin }, annotations: { sidecar.mesh.io/status: injected } }
spec: { serviceAccountName: httpbin, containers: [{ name: httpbin, ports: [{ containerPort: 80 }] }] }
status: { podIP: 10.0.1.10 }
---
kind: ProxyNode
id: sidecar~10.0.1.10~httpbin-1.foo~foo.svc.cluster.local
metadata: { NAMESPACE: foo, SERVICE_ACCOUNT: httpbin }
`;

const policy = (text: string): string => `\n---\n${text}\n`;
const STRICT = policy(
  'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: default, namespace: foo }\nspec: { mtls: { mode: STRICT } }',
);
const DENY_HEADERS = policy(
  'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: deny-headers, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  action: DENY\n  rules: [{ to: [{ operation: { paths: ["/headers"] } }] }]',
);
const ALLOW_BAR = policy(
  'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: allow-bar, namespace: foo }\nspec:\n  action: ALLOW\n  rules: [{ from: [{ source: { namespaces: [bar] } }] }]',
);
const CUSTOM = policy(`kind: MeshConfig
spec:
  extensionProviders: [{ name: opa, envoyExtAuthzGrpc: { service: opa.foo.svc.cluster.local, port: 9191 } }]
---
apiVersion: v1
kind: Service
metadata: { name: opa, namespace: foo }
spec: { clusterIP: 10.96.0.20, selector: { app: opa }, ports: [{ name: grpc, port: 9191 }] }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ext-admin, namespace: foo }
spec: { action: CUSTOM, provider: { name: opa }, rules: [{ to: [{ operation: { paths: ["/admin"] } }] }] }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ext-trial, namespace: foo, annotations: { mesh.io/dry-run: "true" } }
spec: { action: CUSTOM, provider: { name: opa }, rules: [{ to: [{ operation: { paths: ["/trial"] } }] }] }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ext-missing, namespace: foo }
spec: { action: CUSTOM, provider: { name: missing }, rules: [{ to: [{ operation: { paths: ["/missing"] } }] }] }`);
const jwtPolicy = (): string =>
  policy(
    `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: { name: jwt, namespace: foo }\nspec:\n  jwtRules: [{ issuer: ${ISSUER}, jwks: '${jwks}' }]`,
  );

function dumpOf(name: string, yaml: string): EnvoyConfigDump {
  const snapshot = simulateYaml(protos, dir, name, yaml);
  const dump = envoyConfigDump({ bootstrap: {}, snapshot, secrets: undefined, updatedAt: new Map(), rejections: new Map() }, { includeEds: true });
  // As it travels: JSON text.
  return JSON.parse(JSON.stringify(dump)) as EnvoyConfigDump;
}

const FROM_SLEEP = { kind: 'mtls', principal: 'spiffe://cluster.local/ns/bar/sa/sleep' } as const;
const request = (overrides: Partial<ExplainRequest> = {}): ExplainRequest => ({
  method: 'GET',
  path: '/ip',
  host: 'httpbin.foo:8000',
  headers: {},
  source: FROM_SLEEP,
  address: '10.0.1.10',
  port: 80,
  gateway: false,
  now: NOW,
  ...overrides,
});

beforeAll(async () => {
  protos = loadEnvoyProtos();
  dir = mkdtempSync(join(tmpdir(), 'authz-explain-'));
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('x authz explain', () => {
  test('STRICT: plain text is reset, and the explanation names the mode', async () => {
    const dump = dumpOf('strict', WORKLOADS + STRICT);
    const explanation = await explainRequest(dump, request({ source: { kind: 'plaintext' } }));
    expect(explanation).toMatchObject({ listener: 'virtualInbound', mtlsMode: 'STRICT', answer: { outcome: 'reset', by: 'filter chain' } });
    expect(explanation.connection).toBe('mutual TLS is STRICT on this port: plain text is refused');
    expect(await explainRequest(dump, request())).toMatchObject({ mtlsMode: 'STRICT', answer: { outcome: 'forwarded' } });
  });

  test('a DENY policy: 403, naming the policy and rule; other paths forwarded to the app', async () => {
    const dump = dumpOf('deny', WORKLOADS + DENY_HEADERS);
    const denied = await explainRequest(dump, request({ path: '/headers' }));
    expect(denied.answer).toEqual({ outcome: 'respond', status: 403, body: 'RBAC: access denied', by: 'rbac ns[foo]-policy[deny-headers]-rule[0]' });
    expect(denied.rbac).toEqual([
      {
        action: 'DENY',
        policies: ['ns[foo]-policy[deny-headers]-rule[0]'],
        result: 'matched',
        matchedPolicy: 'ns[foo]-policy[deny-headers]-rule[0]',
        allowed: false,
      },
    ]);
    const text = renderExplanation(request({ path: '/headers' }), denied);
    expect(text).toContain('  DENY   matched AuthorizationPolicy deny-headers.foo, rule 0 → denied\n');
    expect(text).toContain('Answer:       403 RBAC: access denied (denied by AuthorizationPolicy deny-headers.foo, rule 0)\n');
    // An odd path that normalizes to the denied one is denied too.
    expect((await explainRequest(dump, request({ path: '/ip/../headers' }))).answer.status).toBe(403);
    const allowed = await explainRequest(dump, request());
    expect(allowed.answer).toEqual({ outcome: 'forwarded', by: 'router' });
    expect(allowed.route).toMatch(/^cluster inbound\|80\|\|/);
    expect(allowed.mtlsMode).toBe('PERMISSIVE');
  });

  test('ALLOW from namespace bar: another namespace gets 403 with no policy matched, bar is allowed', async () => {
    const dump = dumpOf('allow', WORKLOADS + ALLOW_BAR);
    const other = await explainRequest(dump, request({ source: { kind: 'mtls', principal: 'spiffe://cluster.local/ns/legacy/sa/sleep' } }));
    expect(other.answer).toMatchObject({ outcome: 'respond', status: 403, by: 'rbac' });
    expect(other.rbac).toEqual([{ action: 'ALLOW', policies: ['ns[foo]-policy[allow-bar]-rule[0]'], result: 'no match', allowed: false }]);
    expect(renderExplanation(request(), other)).toContain('  ALLOW  no policy matched → denied\n');
    expect((await explainRequest(dump, request())).answer.outcome).toBe('forwarded');
    // Plain text has no principal and no namespace: denied as well.
    expect((await explainRequest(dump, request({ source: { kind: 'plaintext' } }))).answer.status).toBe(403);
  });

  test('JWT: an expired token is 401 with the reason; a valid one names its issuer', async () => {
    const dump = dumpOf('jwt', WORKLOADS + jwtPolicy());
    const nowSeconds = NOW.getTime() / 1000;
    const sign = (claims: Record<string, number>): Promise<string> =>
      new SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).sign(privateKey);
    const expired = await explainRequest(dump, request({ headers: { authorization: `Bearer ${await sign({ exp: nowSeconds - 61 })}` } }));
    expect(expired.answer).toMatchObject({ outcome: 'respond', status: 401, by: 'jwt' });
    expect(expired.jwt).toMatch(/^401 \(expired\): /);
    const valid = await explainRequest(dump, request({ headers: { authorization: `Bearer ${await sign({ exp: nowSeconds + 600 })}` } }));
    expect(valid.jwt).toMatch(/^valid token: issuer testing@secure\.mesh\.io, subject alice/);
    expect(valid.answer.outcome).toBe('forwarded');
    expect((await explainRequest(dump, request())).jwt).toMatch(/^no token: passes/);
  });

  test('CUSTOM: the external authorizer a request is sent to is named, and the answer is conditional on it', async () => {
    const dump = dumpOf('custom', WORKLOADS + CUSTOM);
    const sent = await explainRequest(dump, request({ path: '/admin' }));
    const custom = sent.rbac.find((step) => step.action === 'CUSTOM' && step.result === 'matched');
    expect(custom).toMatchObject({
      matchedPolicy: 'mesh-ext-authz-opa-ns[foo]-policy[ext-admin]-rule[0]',
      externalAuthorizer: { provider: 'opa', cluster: 'outbound|9191||opa.foo.svc.cluster.local' },
    });
    expect(sent.answer).toEqual({ outcome: 'forwarded', by: 'router', ifAllowedBy: ['opa'] });
    const text = renderExplanation(request({ path: '/admin' }), sent);
    expect(text).toContain(
      '  CUSTOM matched AuthorizationPolicy ext-admin.foo, rule 0 → sent to the external authorizer of provider opa (outbound|9191||opa.foo.svc.cluster.local): its answer decides\n',
    );
    expect(text).toContain(
      'Answer:       forwarded to the application (its status is the answer), if the external authorizer of provider opa allows it (explain cannot know its answer; a denial answers instead)\n',
    );

    const notSent = await explainRequest(dump, request({ path: '/ip' }));
    expect(notSent.answer).toEqual({ outcome: 'forwarded', by: 'router' });
    expect(renderExplanation(request(), notSent)).toContain('  CUSTOM no CUSTOM rule matched → the external authorizer is not asked\n');

    const trial = await explainRequest(dump, request({ path: '/trial' }));
    expect(trial.answer).toEqual({ outcome: 'forwarded', by: 'router' });
    expect(renderExplanation(request(), trial)).toContain('[dry-run: would be sent to provider opa by AuthorizationPolicy ext-trial.foo, rule 0]');

    const missing = await explainRequest(dump, request({ path: '/missing' }));
    expect(missing.answer).toMatchObject({ outcome: 'respond', status: 403 });
    expect(renderExplanation(request(), missing)).toContain(
      'denied by AuthorizationPolicy ext-missing.foo, rule 0 (CUSTOM: provider missing cannot be used, its rules are denied)',
    );
  });

  test('a certificate of another trust domain fails the handshake', async () => {
    const dump = dumpOf('domain', WORKLOADS + STRICT);
    const explanation = await explainRequest(dump, request({ source: { kind: 'mtls', principal: 'spiffe://evil.example/ns/bar/sa/sleep' } }));
    expect(explanation.answer).toEqual({ outcome: 'reset', by: 'tls' });
  });

  test('a dump the data plane cannot evaluate is refused with the reason', async () => {
    const dump = dumpOf('deny-broken', WORKLOADS + DENY_HEADERS);
    const listeners = dump.configs.find((c) => String(c['@type']).endsWith('ListenersConfigDump')) as {
      dynamic_listeners: { active_state: { listener: Record<string, unknown> } }[];
    };
    (listeners.dynamic_listeners[0] as { active_state: { listener: Record<string, unknown> } }).active_state.listener['per_connection_buffer_limit_bytes'] = 1;
    await expect(explainRequest(dump, request())).rejects.toThrow(/^the proxy's config cannot be evaluated: .*per_connection_buffer_limit_bytes/);
  });

  test('the built CLI on a saved dump (-f): the text explanation (golden); exclusive source flags are a usage error', async () => {
    const file = join(dir, 'httpbin.config_dump.json');
    writeFileSync(file, JSON.stringify(dumpOf('cli', WORKLOADS + STRICT + DENY_HEADERS)));
    const meshctl = (...args: string[]) =>
      runBin('meshctl', ['x', 'authz', 'explain', '-f', file, '--address', '10.0.1.10', '--port', '80', ...args], { env: { HOME: '/nonexistent' } });
    const denied = await meshctl('--source-principal', 'spiffe://cluster.local/ns/bar/sa/sleep', '--path', '/headers', '--host', 'httpbin.foo:8000');
    expect(denied.stderr).toBe('');
    expectGoldenText(join(PROJECT_ROOT, 'meshctl', 'authz', 'testdata', 'deny-headers.golden.txt'), denied.stdout);
    const customFile = join(dir, 'httpbin-custom.config_dump.json');
    writeFileSync(customFile, JSON.stringify(dumpOf('cli-custom', WORKLOADS + CUSTOM)));
    const external = await runBin(
      'meshctl',
      [
        'x',
        'authz',
        'explain',
        '-f',
        customFile,
        '--address',
        '10.0.1.10',
        '--port',
        '80',
        '--path',
        '/admin',
        '--host',
        'httpbin.foo:8000',
        '--source-principal',
        'spiffe://cluster.local/ns/bar/sa/sleep',
      ],
      { env: { HOME: '/nonexistent' } },
    );
    expect(external.stderr).toBe('');
    expectGoldenText(join(PROJECT_ROOT, 'meshctl', 'authz', 'testdata', 'custom-external.golden.txt'), external.stdout);
    const reset = await meshctl('--plaintext', '--host', 'httpbin.foo:8000');
    expectGoldenText(join(PROJECT_ROOT, 'meshctl', 'authz', 'testdata', 'strict-plaintext.golden.txt'), reset.stdout);
    expect(await meshctl('--plaintext', '--source-principal', 'spiffe://cluster.local/ns/bar/sa/sleep')).toMatchObject({
      code: 64,
      stderr: 'Error: --from, --source-principal and --plaintext are exclusive: give one\n',
    });
    expect(await meshctl('--source-principal', 'bar/sleep')).toMatchObject({
      code: 64,
      stderr: 'Error: --source-principal bar/sleep: want spiffe://<trust domain>/ns/<namespace>/sa/<service account>\n',
    });
  });
});
