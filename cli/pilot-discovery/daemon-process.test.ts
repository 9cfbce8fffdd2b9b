import { createServer, type Server } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { cpSync, unlinkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readSeed, seedsAvailable } from '../../testing/seeds.js';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { buildCsr, newMeshCertificateClient } from '../../ca/index.js';
import { collect, PROJECT_ROOT, runBin, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';

// The built programs, run as users run them. `pilot-discovery request` and `meshctl version
// --remote` talk to the daemon's fixed monitoring port 15014, so the daemon binds it on a
// loopback address of its own.
const DAEMON_HOST = '127.0.0.1';
const SEED = readSeed('daemon');

/** A local OIDC issuer: discovery document and key set, the way the local mesh issues tokens. */
async function startIssuer(): Promise<{ server: Server; url: string; sign: (subject: string, audience: string) => Promise<string> }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test', alg: 'ES256', use: 'sig' };
  let url = '';
  const server = createServer((req, res) => {
    const body = req.url === '/.well-known/openid-configuration' ? { issuer: url, jwks_uri: `${url}/jwks` } : req.url === '/jwks' ? { keys: [jwk] } : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const sign = (subject: string, audience: string): Promise<string> =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'test' })
      .setIssuer(url)
      .setSubject(subject)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey as CryptoKey);
  return { server, url, sign };
}

describe('pilot-discovery discovery, meshctl version --remote and pilot-discovery request', () => {
  let daemon: ChildProcess;
  let httpPort: number;
  let ctrlzPort: number;
  let securePort: number;
  let workDir: string;
  let issuer: Awaited<ReturnType<typeof startIssuer>>;
  let exited: Promise<{ code: number | null; stdout: string; stderr: string }>;

  beforeAll(async () => {
    httpPort = await freePort();
    ctrlzPort = await freePort();
    securePort = await freePort();
    issuer = await startIssuer();
    // The daemon keeps its local CA under its working folder.
    workDir = mkdtempSync(join(tmpdir(), 'daemon-'));
    cpSync(join(PROJECT_ROOT, 'deploy/samples/config'), join(workDir, 'config'), { recursive: true });
    daemon = startBin(
      'pilot-discovery',
      [
        'discovery',
        '--configDir',
        join(workDir, 'config'),
        '--monitoringAddr',
        `${DAEMON_HOST}:15014`,
        '--httpsAddr',
        `${DAEMON_HOST}:15017`,
        '--httpAddr',
        `127.0.0.1:${httpPort}`,
        '--secureGRPCAddr',
        `127.0.0.1:${securePort}`,
        '--grpcAddr',
        '127.0.0.1:0',
        '--ctrlz_address',
        '127.0.0.1',
        '--ctrlz_port',
        String(ctrlzPort),
        '--log_output_level',
        'default:info,ads:debug',
        '--log_as_json',
        '--shutdownDuration',
        '5s',
        '--profile',
      ],
      {
        PILOT_DEBOUNCE_AFTER: '250ms',
        PILOT_ENABLE_ANALYSIS: 'true',
        TOKEN_ISSUER: issuer.url,
        AUDIENCE: 'mesh-ca',
        CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE: '2048',
      },
      workDir,
    );
    // A backstop only: the suite ends the daemon itself; it runs ~25 s alone, twice that on a loaded machine.
    exited = collect(daemon, 120_000);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, {
      timeoutMs: 15_000,
      description: 'the daemon to be ready',
    });
  });

  afterAll(async () => {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
    await exited.catch(() => undefined);
    await new Promise<void>((resolve) => issuer.server.close(() => resolve()));
    rmSync(workDir, { recursive: true, force: true });
  });

  test('the CA on --secureGRPCAddr issues a workload certificate for a token of the local issuer', async () => {
    const root = readFileSync(join(workDir, 'var/lib/mesh/ca/root-cert.pem'));
    const client = newMeshCertificateClient(`127.0.0.1:${securePort}`, credentials.createSsl(root), { 'grpc.ssl_target_name_override': 'localhost' });
    try {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const csr = buildCsr({ key: privateKey, sans: { uris: ['spiffe://cluster.local/ns/bar/sa/someone-else'] } });
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${await issuer.sign('system:serviceaccount:foo:httpbin', 'mesh-ca')}`);
      const chain = await client.createCertificate({ csr, validity_duration: 3600 }, metadata);
      const leaf = new X509Certificate(chain[0] as string);
      expect(leaf.subjectAltName).toBe('URI:spiffe://cluster.local/ns/foo/sa/httpbin');
      expect(leaf.verify(new X509Certificate(root).publicKey)).toBe(true);

      const wrongAudience = new Metadata();
      wrongAudience.set('authorization', `Bearer ${await issuer.sign('system:serviceaccount:foo:httpbin', 'other')}`);
      await expect(client.createCertificate({ csr, validity_duration: 3600 }, wrongAudience)).rejects.toMatchObject({ code: 16 });

      // A caller claiming a cluster the daemon does not know is refused; the daemon's own (CLUSTER_ID's default) is served.
      const claiming = (clusterId: string): Metadata => {
        const claim = metadata.clone();
        claim.set('ClusterID', clusterId);
        return claim;
      };
      await expect(client.createCertificate({ csr, validity_duration: 3600 }, claiming('nope'))).rejects.toMatchObject({ code: 16 });
      expect(await client.createCertificate({ csr, validity_duration: 3600 }, claiming('Kubernetes'))).toHaveLength(2);
    } finally {
      client.close();
    }
  });

  test('the model holds the samples and follows the config folder', async () => {
    const base = `http://127.0.0.1:${httpPort}`;
    const registry = (await (await fetch(`${base}/debug/registryz`)).json()) as Array<{ hostname: string; endpoints: unknown[] }>;
    expect(registry.map((s) => s.hostname).sort()).toEqual([
      'httpbin.bar.svc.cluster.local',
      'httpbin.foo.svc.cluster.local',
      'httpbin.legacy.svc.cluster.local',
    ]);
    expect(registry.every((s) => s.endpoints.length === 1)).toBe(true);
    writeFileSync(
      join(workDir, 'config', 'strict.yaml'),
      'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  name: default\n  namespace: mesh-system\nspec:\n  mtls:\n    mode: STRICT\n',
    );
    writeFileSync(
      join(workDir, 'config', 'bad.yaml'),
      'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata:\n  name: bad\n  namespace: foo\nspec:\n  mtls:\n    mode: SOMETIMES\n',
    );
    const configz = await waitFor(
      async () => {
        const entries = (await (await fetch(`${base}/debug/configz`)).json()) as Array<{ kind: string; name: string }>;
        return entries.some((e) => e.kind === 'PeerAuthentication' && e.name === 'default') ? entries : undefined;
      },
      { timeoutMs: 10_000, description: 'the PeerAuthentication in /debug/configz' },
    );
    expect(configz.some((e) => e.name === 'bad')).toBe(false);
    expect(configz.some((e) => e.kind === 'Gateway' && e.name === 'httpbin-gateway')).toBe(true);
    await waitFor(
      async () => {
        const text = await (await fetch(`http://${DAEMON_HOST}:15014/metrics`)).text();
        return /pilot_total_rejected_configs\{type="PeerAuthentication"\} 1/.test(text);
      },
      { description: 'the rejected config counted' },
    );
  });

  (seedsAvailable ? test : test.skip)('every daemon metric of seed 2 is served on /metrics with its type', async () => {
    const text = await (await fetch(`http://${DAEMON_HOST}:15014/metrics`)).text();
    const shared = /Shared by the daemon and the agent:\n([\s\S]*?)\n\nOnly the daemon:\n([\s\S]*?)\n\nOnly the agent/.exec(SEED);
    expect(shared).not.toBeNull();
    const sections = `${shared?.[1]}\n${shared?.[2]}`;
    const typeOf: Record<string, string> = { Sum: 'counter', Count: 'counter', LastValue: 'gauge', Distribution: 'histogram' };
    let checked = 0;
    for (const line of sections.split('\n')) {
      const match = /^- (Sum|Count|LastValue|Distribution): (.*)\.$/.exec(line);
      if (!match) continue;
      for (const entry of (match[2] as string).split(', ')) {
        const name = entry.split(' ')[0] as string;
        expect(text).toContain(`# TYPE ${name} ${typeOf[match[1] as string]}`);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(80);
    expect(text).toMatch(/^startup_duration_seconds \d/m);
    expect(text).toMatch(/^mesh_build\{component="pilot",tag="[^"]+"\} 1$/m);
  });

  test('PILOT_ENABLE_ANALYSIS in config-folder mode: /debug/analyze holds the messages, which come and go with the files', async () => {
    const analyze = async (): Promise<{ analyzedAt: string | null; executed: string[]; messages: { code: string; origin: string; message: string }[] }> =>
      (await (await fetch(`http://127.0.0.1:${httpPort}/debug/analyze`)).json()) as never;
    const dangling = (report: Awaited<ReturnType<typeof analyze>>): boolean =>
      report.messages.some((m) => m.code === 'MSH0101' && m.origin === 'VirtualService dangling.foo');
    expect((await analyze()).executed).toEqual(expect.arrayContaining(['virtualservice.GatewayAnalyzer', 'gateway.SecretAnalyzer']));
    writeFileSync(
      join(workDir, 'config', 'dangling.yaml'),
      'apiVersion: networking.mesh.io/v1alpha3\nkind: VirtualService\nmetadata: { name: dangling, namespace: foo }\nspec:\n  hosts: [httpbin]\n  gateways: [nowhere]\n  http: [{ route: [{ destination: { host: httpbin } }] }]\n',
    );
    const found = await waitFor(
      async () => {
        const report = await analyze();
        return dangling(report) ? report : undefined;
      },
      { timeoutMs: 10_000, description: 'the dangling gateway reference in /debug/analyze' },
    );
    expect(found.messages.find((m) => m.origin === 'VirtualService dangling.foo')?.message).toBe('Referenced gateway not found: "nowhere"');
    unlinkSync(join(workDir, 'config', 'dangling.yaml'));
    await waitFor(async () => !dangling(await analyze()), { timeoutMs: 10_000, description: 'the message gone with the file' });
  });

  test('ControlZ shows the settings in effect and changes a scope at run time', async () => {
    const base = `http://127.0.0.1:${ctrlzPort}`;
    const settings = (await (await fetch(`${base}/settingsj/`)).json()) as Array<Record<string, unknown>>;
    expect(settings.find((s) => s.name === 'PILOT_DEBOUNCE_AFTER')).toMatchObject({
      type: 'Duration',
      default: '100ms',
      value: '250ms',
      is_set: true,
    });
    const ads = (await (await fetch(`${base}/scopej/ads`)).json()) as Record<string, unknown>;
    expect(ads.output_level).toBe('debug');
    const changed = await fetch(`${base}/scopej/ads`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ output_level: 'warn' }),
    });
    expect(changed.status).toBe(200);
    expect(((await (await fetch(`${base}/scopej/ads`)).json()) as Record<string, unknown>).output_level).toBe('warn');
  });

  test('pilot-discovery request GET /metrics prints the metrics', async () => {
    const result = await runBin('pilot-discovery', ['request', 'GET', '/metrics']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('# TYPE pilot_xds_pushes counter');
  });

  test('--profile: a V8 CPU profile and a heap snapshot under /debug/pprof/, both in the formats Chrome DevTools opens', async () => {
    const base = `http://${DAEMON_HOST}:15014/debug/pprof`;
    expect(await (await fetch(`${base}/`)).text()).toContain('/debug/pprof/heap');
    const cpu = await fetch(`${base}/profile?seconds=1`);
    expect(cpu.status).toBe(200);
    expect(cpu.headers.get('content-disposition')).toMatch(/^attachment; filename="meshd-.*\.cpuprofile"$/);
    const profile = (await cpu.json()) as { nodes: { callFrame: { functionName: string } }[]; startTime: number; endTime: number; samples: number[] };
    expect(profile.nodes[0]?.callFrame.functionName).toBe('(root)');
    expect(profile.endTime - profile.startTime).toBeGreaterThanOrEqual(1_000_000); // microseconds
    expect(profile.samples.length).toBeGreaterThan(0);
    expect((await fetch(`${base}/profile?seconds=0`)).status).toBe(400);
    const heap = await fetch(`${base}/heap`);
    expect(heap.headers.get('content-disposition')).toMatch(/\.heapsnapshot"$/);
    // Read whole: a download left unread holds the monitoring server's shutdown (noted for a follow-up).
    const snapshot = (await heap.json()) as { snapshot: { meta: { node_fields: string[] }; node_count: number } };
    expect(snapshot.snapshot.meta.node_fields).toContain('self_size');
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
    // A CPU profile takes a second; the heap snapshot several on a loaded machine.
  }, 120_000);

  test('pilot-discovery request to a missing path fails with the status', async () => {
    const result = await runBin('pilot-discovery', ['request', 'GET', '/no-such-path']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('answered 404');
  });

  test('meshctl version --remote reports the control plane version', async () => {
    const result = await runBin('meshctl', ['version', '--short'], { env: { MESHCTL_XDS_ADDRESS: `${DAEMON_HOST}:15012` } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^client version: \d+\.\d+\.\d+\ncontrol plane version: \d+\.\d+\.\d+\n$/);
  });

  test('SIGTERM stops the daemon gracefully, within --shutdownDuration', async () => {
    const stoppedAt = Date.now();
    daemon.kill('SIGTERM');
    const result = await exited;
    expect(result.code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    const entries = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(entries.map((e) => e.msg)).toEqual(expect.arrayContaining(['discovery service ready', 'discovery service stopped']));
    expect(entries.find((e) => e.msg === 'logging scope changed')).toMatchObject({ changedScope: 'ads', outputLevel: 'warn' });
  });
});

describe('programs without a daemon', () => {
  test('meshctl version tolerates an absent control plane', async () => {
    const result = await runBin('meshctl', ['version', '--short'], { env: { MESHCTL_XDS_ADDRESS: '127.0.0.93' } });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/control plane version: unavailable/);
    expect(result.stderr).toMatch(/no daemon answered at http:\/\/127\.0\.0\.93:15014\/version \(ECONNREFUSED\)/);
  });

  test('a bad setting stops the program with exit code 2, naming each variable', async () => {
    const result = await runBin('pilot-discovery', ['version'], {
      env: { PILOT_DEBOUNCE_AFTER: 'fast', PILOT_PUSH_THROTTLE: '-3', PILOT_TRACE_SAMPLING: '101' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('invalid value "fast" for PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms or 1m0s');
    expect(result.stderr).toContain('invalid value "-3" for PILOT_PUSH_THROTTLE: expected a positive integer');
    expect(result.stderr).toContain('invalid value "101" for PILOT_TRACE_SAMPLING: expected a number from 0.0 to 100.0');
  });
});

describe('pilot-agent request and wait', () => {
  let server: Server;
  let port: number;
  let readyAfter = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/healthz/ready') {
        readyAfter -= 1;
        res.writeHead(readyAfter < 0 ? 200 : 503).end();
        return;
      }
      if (req.url === '/clusters' && req.method === 'GET') {
        res.writeHead(200).end('outbound|8000||httpbin.foo.svc.cluster.local::127.0.1.10:80::health_flags::healthy\n');
        return;
      }
      if (req.url === '/logging?level=debug' && req.method === 'POST') {
        res.writeHead(200).end('active loggers:\n  admin: debug\n');
        return;
      }
      res.writeHead(404).end('not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('request calls the admin API on --debug-port', async () => {
    const get = await runBin('pilot-agent', ['request', 'GET', 'clusters', '--debug-port', String(port)]);
    expect(get.code).toBe(0);
    expect(get.stdout).toContain('outbound|8000||httpbin.foo.svc.cluster.local');
    const post = await runBin('pilot-agent', ['request', 'POST', '/logging?level=debug', '--debug-port', String(port)]);
    expect(post.stdout).toContain('admin: debug');
  });

  test('wait polls until the proxy answers 200', async () => {
    readyAfter = 3;
    const result = await runBin('pilot-agent', ['wait', '--url', `http://127.0.0.1:${port}/healthz/ready`, '--periodMillis', '20']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\tinfo\tproxy is ready\turl=/);
    expect(result.stdout).not.toContain('not ready yet');
    expect(readyAfter).toBeLessThan(0);
    // The --log_* flags shape what it logs: JSON, with each failed attempt at debug.
    readyAfter = 2;
    const debug = await runBin('pilot-agent', [
      'wait',
      '--url',
      `http://127.0.0.1:${port}/healthz/ready`,
      '--periodMillis',
      '20',
      '--log_as_json',
      '--log_output_level',
      'default:debug',
    ]);
    const entries = debug.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: string; msg: string; problem?: string });
    expect(entries.map((entry) => `${entry.level} ${entry.msg}`)).toEqual([
      'info waiting for the proxy to be ready',
      'debug not ready yet',
      'debug not ready yet',
      'info proxy is ready',
    ]);
    expect(entries[1]?.problem).toBe('last answer was 503');
  });

  test('wait gives up after --timeoutSeconds with exit code 1 and a clear line', async () => {
    readyAfter = 1_000_000;
    const startedAt = Date.now();
    const result = await runBin('pilot-agent', ['wait', '--url', `http://127.0.0.1:${port}/healthz/ready`, '--periodMillis', '50', '--timeoutSeconds', '1']);
    expect(result.code).toBe(1);
    expect(Date.now() - startedAt).toBeLessThan(5000);
    expect(result.stderr).toMatch(/timed out after 1s waiting for .* to answer 200: last answer was 503/);
  });
});
