import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl, type CurlResult } from '../testing/curl.js';
import { CoreV1Api } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { explainPod, loadKubeClient, mtlsReadiness, previewAuthzChange, type ExplainPodInput } from '../meshctl/index.js';
import { kubectl as runKubectl } from '../testing/kubectl.js';
import { runBin } from '../testing/run-bin.js';
import { runMeshctlInProcess } from '../cli/testing/run-meshctl.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// Seed 1's behaviour tables, end to end: the built daemon and agents with embedded data planes on
// loopback, the real curl as client. Policies are applied and removed as files of the config folder.
let mesh: LocalMesh;
let workDir: string;
const changeTimes: { scenario: string; ms: number }[] = [];

const SERVERS = ['foo', 'bar', 'legacy'] as const;
type Namespace = (typeof SERVERS)[number];

function podOf(namespace: string): string {
  const pod = mesh.workloads.find((workload) => workload.namespace === namespace && workload.serves);
  if (!pod) throw new Error(`no backend in ${namespace}`);
  return pod.podIp;
}

/** A request from a client namespace to a server namespace's backend, as seed 1 sends it. */
function call(from: Namespace, to: Namespace, path = '/ip', extra: readonly string[] = []): Promise<CurlResult> {
  if (from === 'legacy') return curl([...extra, `http://${podOf(to)}:8080${path}`]);
  return curl([...extra, '-x', mesh.proxyOf(from), `http://httpbin.${to}:8000${path}`]);
}

/** The headers of curl's `-H 'Name: value'` arguments, as `--header name=value` arguments of meshctl. */
function headerFlags(extra: readonly string[]): string[] {
  return extra.flatMap((arg, i) => {
    if (extra[i - 1] !== '-H') return [];
    const colon = arg.indexOf(':');
    return ['--header', `${arg.slice(0, colon).trim().toLowerCase()}=${arg.slice(colon + 1).trim()}`];
  });
}

interface Explained {
  mtlsMode?: string;
  jwt?: string;
  answer: { outcome: 'reset' | 'respond' | 'forwarded'; status?: number; by: string };
}

/** The command line of `x authz explain` as what the command makes of it: pod, --from/--plaintext, --gateway, --port, --path, --header. */
function explainInputOf(args: readonly string[], kubeConfig: KubeConfig): ExplainPodInput {
  const [target, ...rest] = args;
  const header: string[] = [];
  let input: ExplainPodInput = {
    target: target as string,
    kubeConfig,
    namespace: '',
    meshNamespace: 'mesh-system',
    method: 'GET',
    path: '/',
    gateway: false,
    trustDomain: 'cluster.local',
    header,
  };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    if (flag === '--plaintext') input = { ...input, plaintext: true };
    else if (flag === '--gateway') input = { ...input, gateway: true };
    else {
      const value = rest[++i] as string;
      if (flag === '--from') input = { ...input, from: value };
      else if (flag === '--port') input = { ...input, port: Number(value) };
      else if (flag === '--path') input = { ...input, path: value };
      else if (flag === '--header') header.push(value);
      else throw new Error(`explainInputOf: unexpected ${flag}`);
    }
  }
  return input;
}

/** The built CLI is asked once per mesh (its wiring through the port-forwards); every other explanation runs in process. */
let builtCliAsked = false;

/**
 * Asks `meshctl x authz explain` (through the API server double's port-forwards) about the
 * request curl just sent, and checks that its final answer is what curl saw and that it names
 * what decided: the mTLS mode for a reset, the JWT failure for a 401, the policy for a 403.
 */
async function expectExplained(args: readonly string[], observed: CurlResult): Promise<void> {
  let explained: Explained;
  if (!builtCliAsked) {
    builtCliAsked = true;
    const result = await runBin('meshctl', ['x', 'authz', 'explain', ...args, '-o', 'json'], {
      env: { HOME: '/nonexistent', KUBECONFIG: mesh.kubeconfigPath ?? '' },
      timeoutMs: 60_000,
    });
    expect(result.stderr).toBe('');
    explained = JSON.parse(result.stdout) as Explained;
  } else {
    const kubeConfig = await loadKubeClient({ orchconfig: mesh.kubeconfigPath ?? '', context: '' }, () => undefined);
    explained = (await explainPod(explainInputOf(args, kubeConfig))).explanation;
  }
  const answer = explained.answer.outcome === 'reset' ? '000' : explained.answer.outcome === 'forwarded' ? '200' : String(explained.answer.status);
  expect({ args, answer }).toEqual({ args, answer: observed.code });
  if (observed.code === '000') expect(explained.mtlsMode).toBe('STRICT');
  if (observed.code === '401') expect(explained.jwt).toMatch(/^401 \(/);
  if (observed.code === '403') expect(explained.answer.by).toMatch(/^rbac ns\[[^\]]+\]-policy\[[^\]]+\]-rule\[\d+\]$/);
}

/** Applies a policy and waits until `settled` holds, recording how long the change took to take effect. */
async function applyAndWait(scenario: string, files: Record<string, string>, settled: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  for (const [name, yaml] of Object.entries(files)) await mesh.apply(name, yaml);
  for (;;) {
    if (await settled()) break;
    if (Date.now() - started > 10_000) throw new Error(`${scenario}: the policy did not take effect within 10 s`);
  }
  changeTimes.push({ scenario, ms: Date.now() - started });
}

async function removeAndWait(files: readonly string[]): Promise<void> {
  for (const name of files) await mesh.remove(name);
  const started = Date.now();
  for (;;) {
    const results = await Promise.all(SERVERS.map((to) => call('legacy', to)));
    if (results.every((result) => result.code === '200')) return;
    if (Date.now() - started > 10_000) throw new Error('the policies were not removed within 10 s');
  }
}

async function removeAndSettle(files: readonly string[], settled: () => Promise<boolean>): Promise<void> {
  for (const name of files) await mesh.remove(name);
  const started = Date.now();
  while (!(await settled())) {
    if (Date.now() - started > 10_000) throw new Error(`removing ${files.join(', ')} did not take effect within 10 s`);
  }
}

const peerAuthentication = (namespace: string, mode: string, extra = ''): string =>
  `apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: default, namespace: ${namespace} }\nspec:\n  mtls: { mode: ${mode} }\n${extra}`;
const workloadPolicy = (mode: string, portLevel = ''): string =>
  `apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: httpbin, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  mtls: { mode: ${mode} }\n${portLevel}`;
const destinationRule = (tls: string): string =>
  `apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: httpbin, namespace: foo }\nspec:\n  host: httpbin.foo.svc.cluster.local\n  trafficPolicy:\n${tls}`;

/** Every scenario, against one local mesh: policies as files of the config folder, or `kubectl apply` to the API server double. */
function scenarios(orchestrator: 'folder' | 'kubernetes'): void {
  /** `call`, and in Kubernetes mode the same request explained by meshctl, which must agree. */
  const observed = async (from: Namespace, to: Namespace, path = '/ip', extra: readonly string[] = []): Promise<CurlResult> => {
    const result = await call(from, to, path, extra);
    // An unmeshed server has no proxy to ask: the application answers alone.
    if (orchestrator === 'kubernetes' && to !== 'legacy') {
      const source = from === 'legacy' ? ['--plaintext'] : ['--from', `sleep-${from}.${from}`];
      await expectExplained([`httpbin-${to}.${to}`, ...source, '--port', '8080', '--path', path, ...headerFlags(extra)], result);
    }
    return result;
  };
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), `seed-scenarios-${orchestrator}-`));
    mesh = await startLocalMesh({ workDir, orchestrator });
    await mesh.waitReady(30_000);
  }, 60_000);

  afterAll(async () => {
    await mesh?.stop();
    rmSync(workDir, { recursive: true, force: true });
    if (changeTimes.length > 0) {
      const worst = Math.max(...changeTimes.map((entry) => entry.ms));
      console.log(
        `${orchestrator}: policy change → effect (goal ≤ 2000 ms): ${changeTimes.map((entry) => `${entry.scenario} ${entry.ms} ms`).join(', ')}; worst ${worst} ms`,
      );
    }
    changeTimes.length = 0;
  });

  describe('mutual TLS (seed 1 table)', () => {
    test('no policy: every client reaches every server', async () => {
      for (const from of SERVERS) {
        for (const to of SERVERS) expect({ from, to, code: (await observed(from, to)).code }).toEqual({ from, to, code: '200' });
      }
    });

    if (orchestrator === 'kubernetes') {
      test('x authz preview and x mtls readiness replay the recorded traffic: a DENY names what it would cut, STRICT the plain-text caller', async () => {
        for (let i = 0; i < 2; i++) expect((await call('bar', 'foo', '/headers')).code).toBe('200');
        const denyFile = join(workDir, 'preview-deny-headers.yaml');
        writeFileSync(
          denyFile,
          'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: deny-headers, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  action: DENY\n  rules: [{ to: [{ operation: { paths: ["/headers"] } }] }]\n',
        );
        // Once through the built CLI (its wiring and exit status), then in process.
        const built = await runBin('meshctl', ['x', 'authz', 'preview', '-f', denyFile], {
          env: { HOME: '/nonexistent', KUBECONFIG: mesh.kubeconfigPath ?? '' },
          timeoutMs: 60_000,
        });
        expect([built.code, built.stderr]).toEqual([3, '']);
        expect(built.stdout).toMatch(/allowed → 403 +spiffe:\/\/cluster\.local\/ns\/bar\/sa\/sleep +httpbin-foo\.foo:8080 +GET \/headers +2 /);
        const kubeConfig = await loadKubeClient({ orchconfig: mesh.kubeconfigPath ?? '', context: '' }, () => undefined);
        const preview = (file: string) =>
          previewAuthzChange({ kubeConfig, files: [file], namespace: 'default', meshNamespace: 'mesh-system', readStdin: () => Promise.resolve('') });
        const denied = await preview(denyFile);
        expect(denied.workloads).toEqual(['httpbin-foo.foo']);
        expect(denied.changes.map((change) => [change.source, change.method, change.path, change.calls, change.to.policy])).toEqual([
          ['spiffe://cluster.local/ns/bar/sa/sleep', 'GET', '/headers', 2, 'ns[foo]-policy[deny-headers]-rule[0]'],
        ]);
        const strictFile = join(workDir, 'preview-strict-foo.yaml');
        writeFileSync(strictFile, peerAuthentication('foo', 'STRICT'));
        const strict = await preview(strictFile);
        expect(strict.changes.length).toBeGreaterThan(0);
        for (const change of strict.changes) expect([change.source, change.to.outcome]).toEqual([expect.stringMatching(/^plaintext /), 'reset']);
        expect(strict.changes.map((change) => change.path)).toContain('/ip');

        // Readiness for STRICT: foo's backend took plain text from the legacy client; bar's sleep spoke mutual TLS.
        const readiness = await runBin('meshctl', ['x', 'mtls', 'readiness', '-n', 'foo'], {
          env: { HOME: '/nonexistent', KUBECONFIG: mesh.kubeconfigPath ?? '' },
          timeoutMs: 60_000,
        });
        expect([readiness.code, readiness.stderr]).toEqual([3, '']);
        expect(readiness.stdout).toMatch(/^foo +httpbin-foo\.foo +8080 +127\.0\.0\.1\b.* +\d+ +20\d\d-/m);
        expect(readiness.stdout).toMatch(/^foo: NOT READY \(1 workload port takes plain text/m);
        const ready = (now: Date) => mtlsReadiness({ kubeConfig, namespace: 'foo', sinceMs: 5 * 60_000, now });
        const notReady = await ready(new Date());
        const lastPlaintext = Math.max(...notReady.plaintext.flatMap((row) => row.callers.map((caller) => Date.parse(caller.lastSeen))));
        // Once the legacy client has not called for longer than the window, the namespace is ready.
        const later = await ready(new Date(lastPlaintext + 5 * 60_000 + 1));
        expect(later.namespaces).toEqual([{ namespace: 'foo', ready: true, workloads: 2 }]);
      });
    }

    test('mesh-wide STRICT: unmeshed → meshed fails (000, exit 56); unmeshed → unmeshed and meshed → anything succeed', async () => {
      await applyAndWait(
        'mesh-wide STRICT',
        { 'pa-mesh.yaml': peerAuthentication('mesh-system', 'STRICT') },
        async () => (await call('legacy', 'foo')).code === '000',
      );
      for (const to of ['foo', 'bar'] as const) expect(await observed('legacy', to)).toMatchObject({ code: '000', exit: 56 });
      expect((await observed('legacy', 'legacy')).code).toBe('200');
      for (const from of ['foo', 'bar'] as const)
        for (const to of SERVERS) expect({ from, to, code: (await observed(from, to)).code }).toEqual({ from, to, code: '200' });
      await removeAndWait(['pa-mesh.yaml']);
    });

    test('namespace STRICT: only that namespace refuses unmeshed clients', async () => {
      await applyAndWait('namespace STRICT', { 'pa-foo.yaml': peerAuthentication('foo', 'STRICT') }, async () => (await call('legacy', 'foo')).code === '000');
      expect(await observed('legacy', 'foo')).toMatchObject({ code: '000', exit: 56 });
      expect((await observed('legacy', 'bar')).code).toBe('200');
      expect((await observed('bar', 'foo')).code).toBe('200');
      await removeAndWait(['pa-foo.yaml']);
    });

    test('workload STRICT with its DestinationRule', async () => {
      await applyAndWait(
        'workload STRICT',
        { 'pa-httpbin.yaml': workloadPolicy('STRICT'), 'dr-httpbin.yaml': destinationRule('    tls: { mode: MESH_MUTUAL }\n') },
        async () => (await call('legacy', 'foo')).code === '000',
      );
      expect(await observed('legacy', 'foo')).toMatchObject({ code: '000', exit: 56 });
      expect((await observed('bar', 'foo')).code).toBe('200');
      expect((await observed('legacy', 'bar')).code).toBe('200');
      await removeAndWait(['pa-httpbin.yaml', 'dr-httpbin.yaml']);
    });

    test('workload STRICT with container port 8080 DISABLE (DestinationRule DISABLE on service port 8000): the disabled port serves unmeshed clients', async () => {
      await applyAndWait(
        'namespace STRICT first',
        { 'pa-foo.yaml': peerAuthentication('foo', 'STRICT') },
        async () => (await call('legacy', 'foo')).code === '000',
      );
      await applyAndWait(
        'port-level DISABLE',
        {
          'pa-httpbin.yaml': workloadPolicy('STRICT', '  portLevelMtls:\n    8080: { mode: DISABLE }\n'),
          'dr-httpbin.yaml': destinationRule(
            '    tls: { mode: MESH_MUTUAL }\n    portLevelSettings:\n      - port: { number: 8000 }\n        tls: { mode: DISABLE }\n',
          ),
        },
        async () => (await call('legacy', 'foo')).code === '200' && (await call('bar', 'foo')).code === '200',
      );
      expect((await observed('legacy', 'foo')).code).toBe('200');
      expect((await observed('bar', 'foo')).code).toBe('200');
      await removeAndWait(['pa-httpbin.yaml', 'dr-httpbin.yaml', 'pa-foo.yaml']);
    });

    test('workload DISABLE overrides namespace STRICT (DestinationRule DISABLE)', async () => {
      // Namespace STRICT first, witnessed, so the wait below cannot be met by the state before the change.
      await applyAndWait(
        'namespace STRICT before DISABLE',
        { 'pa-foo.yaml': peerAuthentication('foo', 'STRICT') },
        async () => (await call('legacy', 'foo')).code === '000',
      );
      await applyAndWait(
        'workload DISABLE',
        {
          'pa-httpbin.yaml': workloadPolicy('DISABLE'),
          'dr-httpbin.yaml': destinationRule('    tls: { mode: DISABLE }\n'),
        },
        async () => (await call('bar', 'foo')).code === '200' && (await call('legacy', 'foo')).code === '200',
      );
      expect((await observed('legacy', 'foo')).code).toBe('200');
      expect((await observed('bar', 'foo')).code).toBe('200');
      // Back through namespace STRICT, witnessed, so the end state cannot be mistaken for the one before removal.
      await removeAndSettle(['pa-httpbin.yaml', 'dr-httpbin.yaml'], async () => (await call('legacy', 'foo')).code === '000');
      await removeAndWait(['pa-foo.yaml']);
    });
  });

  describe('ServiceEntry: an external API through the sidecar', () => {
    let external: Server;
    let externalPort = 0;
    beforeAll(async () => {
      external = createServer((request, response) => response.end(`external ${request.headers.host ?? ''} ${request.url ?? ''}`));
      // `localhost` as the entry's endpoint: a name the data plane resolves, as a DNS entry's endpoints are.
      await new Promise<void>((done) => external.listen(0, 'localhost', done));
      externalPort = (external.address() as AddressInfo).port;
    });
    afterAll(async () => {
      await new Promise((done) => external.close(done));
    });

    const serviceEntry = (name: string, host: string, resolution: string, address: string): string =>
      `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: { name: ${name}, namespace: foo }\nspec:\n  hosts: [${host}]\n  location: MESH_EXTERNAL\n  resolution: ${resolution}\n  ports:\n    - { number: 80, name: http, protocol: HTTP }\n  endpoints:\n    - { address: ${address}, ports: { http: ${externalPort} } }\n`;
    const viaSidecar = (host: string, path = '/hello'): Promise<CurlResult> => curl(['-x', mesh.proxyOf('bar'), `http://${host}${path}`]);

    test('DNS: a host nobody resolves fails; with the entry its endpoint answers; deleted, it fails again', async () => {
      const before = await viaSidecar('api.payments.test');
      expect(before.code).not.toBe('200');
      await applyAndWait(
        'ServiceEntry DNS',
        { 'se-dns.yaml': serviceEntry('payments', 'api.payments.test', 'DNS', 'localhost') },
        async () => (await viaSidecar('api.payments.test')).code === '200',
      );
      expect(await viaSidecar('api.payments.test', '/v1/charge')).toMatchObject({ code: '200', body: 'external api.payments.test /v1/charge' });
      await removeAndSettle(['se-dns.yaml'], async () => (await viaSidecar('api.payments.test')).code !== '200');
    });

    test('STATIC: an IP endpoint served over EDS', async () => {
      await applyAndWait(
        'ServiceEntry STATIC',
        { 'se-static.yaml': serviceEntry('search', 'search.static.test', 'STATIC', '127.0.0.1') },
        async () => (await viaSidecar('search.static.test')).code === '200',
      );
      expect(await viaSidecar('search.static.test', '/q')).toMatchObject({ code: '200', body: 'external search.static.test /q' });
      await removeAndSettle(['se-static.yaml'], async () => (await viaSidecar('search.static.test')).code !== '200');
    });
  });

  describe('X-Forwarded-Client-Cert', () => {
    test('a meshed backend sees By, Hash, Subject and URI with both identities; an unmeshed one sees none', async () => {
      const meshed = await call('foo', 'bar', '/headers');
      expect(meshed.code).toBe('200');
      const xfcc = (JSON.parse(meshed.body) as { headers: Record<string, string> }).headers['X-Forwarded-Client-Cert'];
      expect(xfcc).toMatch(
        /^By=spiffe:\/\/cluster\.local\/ns\/bar\/sa\/httpbin;Hash=[0-9a-f]{64};Subject="[^"]*";URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep$/,
      );
      const unmeshed = await call('foo', 'legacy', '/headers', ['-H', 'X-Forwarded-Client-Cert: By=forged']);
      expect(unmeshed.code).toBe('200');
      expect((JSON.parse(unmeshed.body) as { headers: Record<string, string> }).headers['X-Forwarded-Client-Cert']).toBeUndefined();
    });
  });

  describe('end-user JWT and authorization at a workload (seed 1)', () => {
    const requestAuthentication = (): string =>
      `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: { name: jwt-example, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  jwtRules:\n    - issuer: testing@secure.mesh.io\n      jwksUri: ${mesh.issuer.endUserJwksUri}\n`;
    const deny = (paths = ''): string =>
      `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: require-jwt, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  action: DENY\n  rules:\n    - from: [{ source: { notRequestPrincipals: ["*"] } }]\n${paths}`;
    const bearer = async (options: Parameters<LocalMesh['issuer']['endUserToken']>[0] = {}): Promise<string[]> => [
      '-H',
      `Authorization: Bearer ${await mesh.issuer.endUserToken(options)}`,
    ];

    test('no token 200, invalid token 401, valid token 200; expiry and not-before with 60 s of skew', async () => {
      const invalid = ['-H', `Authorization: Bearer ${await mesh.issuer.endUserToken({ foreignKey: true })}`];
      const valid = await bearer();
      // In effect once the daemon fetched the key set: until then it inlines one that verifies nothing.
      await applyAndWait(
        'RequestAuthentication (key set fetched)',
        { 'ra-httpbin.yaml': requestAuthentication() },
        async () => (await call('bar', 'foo', '/headers', invalid)).code === '401' && (await call('bar', 'foo', '/headers', valid)).code === '200',
      );
      expect((await observed('bar', 'foo', '/headers')).code).toBe('200');
      expect((await observed('bar', 'foo', '/headers', invalid)).code).toBe('401');
      expect((await observed('bar', 'foo', '/headers', await bearer())).code).toBe('200');
      const now = Math.floor(Date.now() / 1000);
      expect((await observed('bar', 'foo', '/ip', await bearer({ exp: now - 30 }))).code).toBe('200');
      expect((await observed('bar', 'foo', '/ip', await bearer({ exp: now - 90 }))).code).toBe('401');
      expect((await observed('bar', 'foo', '/ip', await bearer({ nbf: now + 30 }))).code).toBe('200');
      expect((await observed('bar', 'foo', '/ip', await bearer({ nbf: now + 90 }))).code).toBe('401');
    });

    test('DENY notRequestPrincipals ["*"]: 403 without a token, 200 with one; limited to /headers, /ip stays open', async () => {
      await applyAndWait('DENY without principal', { 'ap-httpbin.yaml': deny() }, async () => (await call('bar', 'foo', '/headers')).code === '403');
      expect((await observed('bar', 'foo', '/headers')).code).toBe('403');
      expect((await observed('bar', 'foo', '/headers', await bearer())).code).toBe('200');
      await applyAndWait(
        'DENY on /headers',
        { 'ap-httpbin.yaml': deny('      to: [{ operation: { paths: ["/headers"] } }]\n') },
        async () => (await call('bar', 'foo', '/ip')).code === '200',
      );
      expect((await observed('bar', 'foo', '/headers')).code).toBe('403');
      expect((await observed('bar', 'foo', '/ip')).code).toBe('200');
      await removeAndSettle(['ap-httpbin.yaml', 'ra-httpbin.yaml'], async () => (await call('bar', 'foo', '/headers')).code === '200');
    });
  });

  describe('the ingress gateway (seed 1 JWT table)', () => {
    const gateway = (): string => {
      const pod = mesh.workloads.find((workload) => workload.kind === 'router');
      if (!pod) throw new Error('no gateway in the samples');
      return `http://${pod.podIp}:8080`;
    };
    const viaGateway = (path: string, extra: readonly string[] = []): Promise<CurlResult> => curl([...extra, `${gateway()}${path}`]);
    const observedGateway = async (path: string, extra: readonly string[] = []): Promise<CurlResult> => {
      const result = await viaGateway(path, extra);
      const pod = mesh.workloads.find((workload) => workload.kind === 'router');
      if (orchestrator === 'kubernetes' && pod)
        await expectExplained([`${pod.name}.${pod.namespace}`, '--plaintext', '--port', '8080', '--path', path, ...headerFlags(extra)], result);
      return result;
    };
    const bearer = async (options: Parameters<LocalMesh['issuer']['endUserToken']>[0] = {}): Promise<string[]> => [
      '-H',
      `Authorization: Bearer ${await mesh.issuer.endUserToken(options)}`,
    ];
    const requestAuthentication = (): string =>
      `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: { name: jwt-example, namespace: mesh-system }\nspec:\n  selector: { matchLabels: { mesh: ingressgateway } }\n  jwtRules:\n    - issuer: testing@secure.mesh.io\n      jwksUri: ${mesh.issuer.endUserJwksUri}\n`;
    const deny = (paths = ''): string =>
      `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: frontend-ingress, namespace: mesh-system }\nspec:\n  selector: { matchLabels: { mesh: ingressgateway } }\n  action: DENY\n  rules:\n    - from: [{ source: { notRequestPrincipals: ["*"] } }]\n${paths}`;

    test('the gateway exposes the backend through its Gateway and VirtualService', async () => {
      expect((await observedGateway('/ip')).code).toBe('200');
    });

    test('no token 200, invalid 401, valid 200, 60 s of skew on exp and nbf', async () => {
      const valid = await bearer();
      const invalid = await bearer({ foreignKey: true });
      await applyAndWait(
        'gateway RequestAuthentication',
        { 'ra-gateway.yaml': requestAuthentication() },
        async () => (await viaGateway('/headers', invalid)).code === '401' && (await viaGateway('/headers', valid)).code === '200',
      );
      expect((await observedGateway('/headers')).code).toBe('200');
      expect((await observedGateway('/headers', invalid)).code).toBe('401');
      expect((await observedGateway('/headers', valid)).code).toBe('200');
      const now = Math.floor(Date.now() / 1000);
      expect((await observedGateway('/ip', await bearer({ exp: now - 30 }))).code).toBe('200');
      expect((await observedGateway('/ip', await bearer({ exp: now - 90 }))).code).toBe('401');
      expect((await observedGateway('/ip', await bearer({ nbf: now + 30 }))).code).toBe('200');
      expect((await observedGateway('/ip', await bearer({ nbf: now + 90 }))).code).toBe('401');
    });

    test('DENY notRequestPrincipals ["*"]: 403 without a token, 200 with one; with paths ["/headers"], /ip stays open', async () => {
      await applyAndWait('gateway DENY', { 'ap-gateway.yaml': deny() }, async () => (await viaGateway('/headers')).code === '403');
      expect((await observedGateway('/headers', await bearer())).code).toBe('200');
      expect((await observedGateway('/ip')).code).toBe('403');
      await applyAndWait(
        'gateway DENY on /headers',
        { 'ap-gateway.yaml': deny('      to: [{ operation: { paths: ["/headers"] } }]\n') },
        async () => (await viaGateway('/ip')).code === '200',
      );
      expect((await observedGateway('/headers')).code).toBe('403');
      expect((await observedGateway('/headers', await bearer())).code).toBe('200');
      await removeAndSettle(['ap-gateway.yaml', 'ra-gateway.yaml'], async () => (await viaGateway('/headers')).code === '200');
    });
  });

  describe('the API versions users write today', () => {
    test('a security.mesh.io/v1 AuthorizationPolicy and a networking.mesh.io/v1 VirtualService take effect, and read back in every served version', async () => {
      const policy = `apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: { name: deny-v1, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  action: DENY\n  rules:\n    - to: [{ operation: { paths: ["/status/418"] } }]\n`;
      const route = `apiVersion: networking.mesh.io/v1\nkind: VirtualService\nmetadata: { name: route-v1, namespace: foo }\nspec:\n  hosts: [httpbin.foo.svc.cluster.local]\n  http:\n    - headers: { request: { set: { x-mesh-api: v1 } } }\n      route: [{ destination: { host: httpbin.foo.svc.cluster.local } }]\n`;
      const routed = async (): Promise<boolean> => /x-mesh-api/i.test((await call('bar', 'foo', '/headers')).body);
      await applyAndWait(
        'v1 AuthorizationPolicy and VirtualService',
        { 'ap-v1.yaml': policy, 'vs-v1.yaml': route },
        async () => (await call('bar', 'foo', '/status/418')).code === '403' && (await routed()),
      );
      expect((await observed('bar', 'foo', '/status/418')).code).toBe('403');
      expect((await observed('bar', 'foo', '/ip')).code).toBe('200');
      if (orchestrator === 'kubernetes') {
        const kubectl = (...args: string[]) => runKubectl({ kubeconfig: mesh.kubeconfigPath ?? '', home: workDir }, args);
        const readBack = async (resource: string, name: string): Promise<string> =>
          (await kubectl('get', resource, name, '-n', 'foo', '-o', 'jsonpath={.apiVersion}')).stdout;
        for (const version of ['v1', 'v1beta1'])
          expect(await readBack(`authorizationpolicies.${version}.security.mesh.io`, 'deny-v1')).toBe(`security.mesh.io/${version}`);
        for (const version of ['v1', 'v1beta1', 'v1alpha3'])
          expect(await readBack(`virtualservices.${version}.networking.mesh.io`, 'route-v1')).toBe(`networking.mesh.io/${version}`);
      }
      await removeAndSettle(['ap-v1.yaml', 'vs-v1.yaml'], async () => (await call('bar', 'foo', '/status/418')).code !== '403' && !(await routed()));
    });
  });

  describe('config the data plane cannot implement', () => {
    test('is NACKed with the field named, traffic keeps flowing on the last good config, and /debug/syncz shows the error', async () => {
      const hashing = `apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: httpbin-hash, namespace: bar }\nspec:\n  host: httpbin.bar.svc.cluster.local\n  trafficPolicy:\n    loadBalancer:\n      consistentHash: { httpHeaderName: x-user }\n`;
      await mesh.apply('dr-hash.yaml', hashing);
      const syncz = async (): Promise<{ proxy: string; types: { type: string; status: string; lastError?: string }[] }[]> =>
        (await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/syncz`)).json()) as never;
      const started = Date.now();
      let rejected: { type: string; status: string; lastError?: string } | undefined;
      while (!rejected) {
        rejected = (await syncz()).find((entry) => entry.proxy === 'sleep-foo.foo')?.types.find((type) => type.lastError);
        if (Date.now() - started > 10_000) throw new Error('no NACK recorded within 10 s');
      }
      expect(rejected.status).toBe('ERROR');
      expect(rejected.lastError).toContain('Cluster outbound|8000||httpbin.bar.svc.cluster.local: lb_policy: RING_HASH is not supported');
      expect((await observed('foo', 'bar')).code).toBe('200');
      const metrics = await (await fetch(`http://127.0.0.1:${mesh.daemon.monitoringPort}/metrics`)).text();
      expect(metrics).toMatch(/pilot_total_xds_rejects\{type="cds"\} [1-9]/);
      await removeAndSettle(
        ['dr-hash.yaml'],
        async () => !(await syncz()).find((entry) => entry.proxy === 'sleep-foo.foo')?.types.some((type) => type.lastError),
      );
    });
  });
}

/** meshctl's diagnostics against the local mesh in Kubernetes mode, as a user runs them after `export KUBECONFIG=…`. */
function diagnostics(): void {
  // In process, the cluster is named with -c (client-node reads KUBECONFIG from the process itself).
  const meshctl = (...args: string[]) => runMeshctlInProcess([...(mesh.kubeconfigPath ? ['-c', mesh.kubeconfigPath] : []), ...args], { HOME: '/nonexistent' });

  describe('meshctl diagnostics (proxy-status, proxy-config) through port-forwards', () => {
    test('ps: every proxy SYNCED with the daemon pod', async () => {
      const synced = / +Kubernetes +SYNCED +SYNCED +SYNCED +SYNCED +IGNORED +meshd-local +\S+$/;
      const proxies = mesh.workloads.filter((w) => w.kind !== 'none').map((w) => `${w.name}.${w.namespace}`);
      // The previous test's last removal is still being acknowledged by some proxies on a loaded
      // machine (STALE): ask again until they have, as a user would, within the push's own bound.
      const started = Date.now();
      let lines: string[];
      for (;;) {
        const result = await meshctl('ps');
        expect(result.stderr).toBe('');
        lines = result.stdout.trim().split('\n');
        if (proxies.every((proxy) => synced.test(lines.find((line) => line.startsWith(`${proxy} `)) ?? '')) || Date.now() - started > 10_000) break;
      }
      expect(lines[0]).toMatch(/^NAME +CLUSTER +CDS +LDS +EDS +RDS +ECDS +MESHD +VERSION$/);
      for (const proxy of proxies) expect(lines.find((line) => line.startsWith(`${proxy} `))).toMatch(synced);
    });

    test('ps <pod>: the proxy holds what the daemon sent it', async () => {
      const result = await meshctl('ps', 'httpbin-foo.foo');
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(
        /^Clusters Match\nListeners Match\nRoutes Match \(RDS last loaded at [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\)\n$/,
      );
    });

    test('pc cluster, listener and secret of a pod, and its log levels', async () => {
      const clusters = await meshctl('pc', 'cluster', 'sleep-foo', '-n', 'foo');
      expect(clusters.stderr).toBe('');
      expect(clusters.stdout).toMatch(/\nhttpbin\.bar\.svc\.cluster\.local +8000 +- +outbound +EDS +- *\n/);
      expect((await meshctl('pc', 'listener', 'pod/httpbin-foo.foo')).stdout).toMatch(/\n0\.0\.0\.0 +15006 +/);
      expect((await meshctl('pc', 'secret', 'httpbin-foo.foo')).stdout).toMatch(
        /^RESOURCE NAME +TYPE +STATUS +VALID CERT[^\n]*\ndefault +Cert Chain +ACTIVE +true +\d+ /,
      );
      expect((await meshctl('pc', 'log', 'httpbin-foo.foo', '--level', 'rbac:debug')).stdout).toContain('  rbac: debug\n');
      expect((await meshctl('pc', 'log', 'httpbin-foo.foo', '-r')).stdout).toContain('  rbac: warning\n');
    });

    test('x describe pod: ports, services, effective peer authentication, the gateway exposing it', async () => {
      const plain = await meshctl('x', 'describe', 'pod', 'httpbin-foo', '-n', 'foo');
      expect(plain.stderr).toBe('');
      expect(plain.stdout).toBe(
        [
          'Pod: httpbin-foo',
          '   Pod Revision: default',
          '   Pod Ports: 8080 (httpbin), 15090 (mesh-proxy)',
          '--------------------',
          'Service: httpbin',
          '   Port: http 8000/HTTP targets pod port 8080',
          '--------------------',
          'Effective PeerAuthentication:',
          '   Workload mTLS mode: PERMISSIVE',
          `Exposed on Ingress Gateway http://${mesh.workloads.find((w) => w.kind === 'router')?.podIp ?? '?'}:8080`,
          'VirtualService: httpbin',
          '',
        ].join('\n'),
      );
      expect(await meshctl('x', 'describe', 'pod', 'nope', '-n', 'legacy')).toMatchObject({
        code: 1,
        stderr: 'Error: unable to retrieve Pod: pods "nope" not found\n',
      });
    });

    test('x describe pod and x authz check after a DestinationRule, PeerAuthentication, RequestAuthentication and AuthorizationPolicy', async () => {
      const policies = {
        'describe-dr.yaml': `apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: { name: httpbin, namespace: foo }\nspec:\n  host: httpbin.foo.svc.cluster.local\n  trafficPolicy: { tls: { mode: MESH_MUTUAL } }\n  subsets:\n    - { name: v1, labels: { version: v1 } }\n    - { name: v2, labels: { version: v2 } }\n`,
        'describe-pa.yaml': peerAuthentication('foo', 'STRICT'),
        'describe-ra.yaml': `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: { name: jwt, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  jwtRules: [{ issuer: ${JSON.stringify(mesh.issuer.url)}, jwksUri: ${JSON.stringify(`${mesh.issuer.url}/jwks`)} }]\n`,
        'describe-ap.yaml': `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: { name: deny-admin, namespace: foo }\nspec:\n  selector: { matchLabels: { app: httpbin } }\n  action: DENY\n  rules: [{ to: [{ operation: { paths: ["/admin"] } }] }, { to: [{ operation: { paths: ["/private"] } }] }]\n`,
      };
      // Applied in this order, the AuthorizationPolicy arriving means the others have too.
      await applyAndWait('describe policies', policies, async () => (await meshctl('x', 'authz', 'check', 'httpbin-foo.foo')).stdout.includes('deny-admin'));
      try {
        const described = await meshctl('x', 'describe', 'pod', 'httpbin-foo.foo');
        expect(described.stderr).toBe('');
        expect(described.stdout).toContain(
          'Service: httpbin\n   Port: http 8000/HTTP targets pod port 8080\nDestinationRule: httpbin for "httpbin.foo.svc.cluster.local"\n   Matching subsets: v1\n      (Non-matching subsets v2)\n   Traffic Policy TLS Mode: MESH_MUTUAL\n',
        );
        expect(described.stdout).toContain(
          'Effective PeerAuthentication:\n   Workload mTLS mode: STRICT\nApplied PeerAuthentication:\n   default.foo\nApplied RequestAuthentication:\n   jwt.foo\nRBAC policies: deny-admin.foo\n',
        );
        const authz = await meshctl('x', 'authz', 'check', 'httpbin-foo', '-n', 'foo');
        expect(authz.stdout).toBe('ACTION   AuthorizationPolicy   RULES\nDENY     deny-admin.foo        2\n');
        // The same from a saved config dump (`pc all -o json` prints the whole dump).
        writeFileSync(join(workDir, 'httpbin-foo.config_dump.json'), (await meshctl('pc', 'all', 'httpbin-foo.foo', '-o', 'json')).stdout);
        expect((await meshctl('x', 'authz', 'check', '-f', join(workDir, 'httpbin-foo.config_dump.json'))).stdout).toBe(authz.stdout);
        const service = await meshctl('x', 'describe', 'svc', 'httpbin.foo');
        expect(service.stdout).toContain('Pod: httpbin-foo\n');
        expect((await meshctl('x', 'describe', 'svc', 'httpbin', '-n', 'legacy')).stdout).toBe(
          'Service "httpbin" has no mesh pods.  (1 pods in service).\nUse `meshctl orch-inject` or redeploy with automatic sidecar injection.\n',
        );
      } finally {
        await removeAndWait(Object.keys(policies));
      }
    });

    test('x wait: a VirtualService generation reaches every proxy; a future generation times out; a deletion leaves them', async () => {
      const virtualService = (timeout: string): string =>
        `apiVersion: networking.mesh.io/v1alpha3\nkind: VirtualService\nmetadata: { name: wait-demo, namespace: foo }\nspec:\n  hosts: [httpbin.foo.svc.cluster.local]\n  http: [{ timeout: ${timeout}, route: [{ destination: { host: httpbin.foo.svc.cluster.local } }] }]\n`;
      await mesh.apply('wait-demo.yaml', virtualService('5s'));
      await mesh.apply('wait-demo.yaml', virtualService('7s'));
      const proxies = mesh.workloads.filter((w) => w.kind !== 'none').length;
      const waited = await meshctl('x', 'wait', 'vs', 'wait-demo.foo', '--timeout', '20s');
      expect(waited.stderr).toBe('');
      expect(waited.stdout).toBe(
        `Resource VirtualService/foo/wait-demo present on ${proxies * 3} out of ${proxies * 3} configurations for totally ${proxies} sidecars\n`,
      );
      const future = await meshctl('x', 'wait', 'VirtualService', 'wait-demo', '-n', 'foo', '--generation', '9', '--timeout', '1500ms');
      expect(future).toMatchObject({
        code: 1,
        stderr: 'Error: timeout expired before resource VirtualService/foo/wait-demo became effective on all sidecars\n',
      });
      await mesh.remove('wait-demo.yaml');
      expect((await meshctl('x', 'wait', '--for', 'delete', 'virtualservices', 'wait-demo.foo', '--timeout', '20s')).stdout).toMatch(
        /^Resource VirtualService\/foo\/wait-demo removed from \d+ out of \d+ configurations/,
      );
      expect(await meshctl('x', 'wait', 'pods', 'x')).toMatchObject({ code: 64 });
      // A kind no proxy receives has no distribution: refused at once rather than after --timeout.
      expect(await meshctl('x', 'wait', 'wg', 'vms.foo')).toMatchObject({
        code: 64,
        stderr: 'Error: type wg: WorkloadGroup is not sent to proxies, there is no distribution to wait for\n',
      });
    });

    test('analyze -A never reports the mesh’s own daemon or gateway', async () => {
      const result = await meshctl('analyze', '-A');
      expect(result.stderr).not.toMatch(/Error/);
      const findings = result.stdout.split('\n').filter((line) => /^(Error|Warning|Info) \[MSH\d{4}\]/.test(line));
      expect(findings.filter((line) => /MSH0144|meshd|ingressgateway/.test(line))).toEqual([]);
    });

    test("kubectl logs reads the daemon's and a sidecar's output; get pods shows the injected pod 2/2 Running", async () => {
      const kubectl = (...args: string[]) => runKubectl({ kubeconfig: mesh.kubeconfigPath ?? '', home: workDir }, args);
      const daemon = await kubectl('logs', 'meshd-local', '-n', 'mesh-system', '--tail', '3');
      expect(daemon.code).toBe(0);
      expect(daemon.stdout.trim().split('\n')).toHaveLength(3);
      const sidecar = await kubectl('logs', 'httpbin-foo', '-n', 'foo', '-c', 'mesh-proxy');
      const row = (await kubectl('get', 'pods', 'httpbin-foo', '-n', 'foo')).stdout.trim().split('\n')[1]?.split(/\s+/);
      expect(row?.slice(0, 4)).toEqual(['httpbin-foo', '2/2', 'Running', '0']);
      expect(sidecar.stdout).toMatch(/\tinfo\t/);
      expect((await kubectl('logs', 'httpbin-foo', '-n', 'foo', '-c', 'nope')).stderr).toContain('container nope is not valid for pod httpbin-foo');
    });

    test('an unreachable daemon is named after its own timeout; the others’ answers are printed', async () => {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(mesh.kubeconfigPath ?? '');
      const core = kubeConfig.makeApiClient(CoreV1Api);
      const created = await core.createNamespacedPod({
        namespace: 'mesh-system',
        body: { metadata: { name: 'meshd-gone', labels: { app: 'meshd' } }, spec: { containers: [{ name: 'discovery', image: 'pilot' }] } },
      });
      // No process listens at this pod's address (a stopped daemon's pod not yet deleted).
      await core.replaceNamespacedPodStatus({
        name: 'meshd-gone',
        namespace: 'mesh-system',
        body: { ...created, status: { phase: 'Running', podIP: '127.0.0.254' } },
      });
      try {
        const result = await meshctl('ps');
        expect(result.stderr).toMatch(/^meshd pod meshd-gone did not answer: failure running port forward process: .*\n$/);
        expect(result.stdout).toContain(' meshd-local ');
        expect(result.code).toBe(0);
      } finally {
        await core.deleteNamespacedPod({ name: 'meshd-gone', namespace: 'mesh-system' });
      }
    });
  });
}

describe('config folder (local mode)', () => scenarios('folder'));
describe('Kubernetes mode: kubectl apply to the API server double', () => {
  scenarios('kubernetes');
  diagnostics();
});
