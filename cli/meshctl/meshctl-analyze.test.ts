import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { kubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl analyze, the built CLI: files alone (-k=false), and the API server double's state with
// files applied over it, the cluster's objects created with the real kubectl.
const TESTDATA = join(PROJECT_ROOT, 'cli', 'testdata', 'analyze');
const INJECTORS = join(TESTDATA, 'overlapping-injectors.yaml');
let kube: ApiServerDouble;
let dir: string;
let silent: Server;
const meshctl = (args: readonly string[], env: Record<string, string> = {}) =>
  runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent', TERM: 'xterm', ...env });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-analyze-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const target = { kubeconfig: join(dir, 'kubeconfig'), home: dir };
  const applied = await kubectl(target, ['apply', '-f', join(PROJECT_ROOT, 'crds', 'generated', 'crds.yaml')]);
  expect(applied.stderr).toBe('');
  // A server that accepts connections and never answers: what --timeout is for.
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  writeFileSync(
    join(dir, 'silent-kubeconfig'),
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n`,
  );
}, 60_000);

afterAll(async () => {
  await kube?.close();
  silent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl analyze: golden outputs over a folder of problems (-R)', () => {
  const PROBLEMS = 'cli/testdata/analyze/problems';
  test.each(['log', 'json', 'yaml'])('-o %s', async (format) => {
    const result = await meshctl(['analyze', '-k=false', '-R', '-o', format, PROBLEMS]);
    expect(result.code).toBe(79);
    expectGoldenText(join(TESTDATA, `problems.${format}.golden.txt`), result.stdout.replace(/\/v\d+\.\d+\//g, '/vX.Y/'));
  });

  test('--output-threshold Warning hides the infos; --failure-threshold Warning fails on a warning alone', async () => {
    const warnings = await meshctl(['analyze', '-k=false', '-R', '--output-threshold', 'Warning', PROBLEMS]);
    expect(warnings.stdout).not.toMatch(/^Info /m);
    expect(warnings.stdout).toMatch(/^Warning \[MSH0144\]/m);
    const uid = join(PROBLEMS, 'workloads.yaml');
    expect((await meshctl(['analyze', '-k=false', '-S', 'MSH0102=Namespace *', '-S', 'MSH0118=Service *', uid])).code).toBe(0);
    expect((await meshctl(['analyze', '-k=false', '-S', 'MSH0102=Namespace *', '-S', 'MSH0118=Service *', '--failure-threshold', 'Warning', uid])).code).toBe(
      79,
    );
  });
});

describe('meshctl analyze: files only', () => {
  test("an error names the resource, the file and the line, and exits 79 with the reference's verdict", async () => {
    const result = await meshctl(['analyze', '--use-orch=false', INJECTORS]);
    expect(result.code).toBe(79);
    expect(result.stdout).toBe(
      [
        `Error [MSH0139] (MutatingWebhookConfiguration first-injector ${INJECTORS}:2) Webhook overlaps with others: [second-injector/namespace.sidecar-injector.mesh.io]. This may cause injection to occur twice.`,
        `Error [MSH0139] (MutatingWebhookConfiguration second-injector ${INJECTORS}:13) Webhook overlaps with others: [first-injector/namespace.sidecar-injector.mesh.io]. This may cause injection to occur twice.`,
        '',
      ].join('\n'),
    );
    expect(result.stderr).toMatch(
      new RegExp(
        `^Error: Analyzers found issues when analyzing ${INJECTORS.replace(/[.]/g, '\\.')}\\.\nSee https://mesh\\.io/v\\d+\\.\\d+/docs/reference/config/analysis for more information about causes and resolutions\\.\n$`,
      ),
    );
  });

  test("-o json: the reference's records with the documentation URL, exit 79 without the verdict text", async () => {
    const result = await meshctl(['analyze', '-k=false', '-o', 'json', INJECTORS]);
    expect(result.code).toBe(79);
    expect(result.stderr).toBe('');
    const records = JSON.parse(result.stdout) as Record<string, string>[];
    expect(records).toHaveLength(2);
    expect(records[0]).toEqual({
      code: 'MSH0139',
      level: 'Error',
      origin: 'MutatingWebhookConfiguration first-injector',
      reference: `${INJECTORS}:2`,
      message: 'Webhook overlaps with others: [second-injector/namespace.sidecar-injector.mesh.io]. This may cause injection to occur twice.',
      documentationUrl: expect.stringMatching(/^https:\/\/mesh\.io\/v\d+\.\d+\/docs\/reference\/config\/analysis\/msh0139\/\?ref=meshctl-analyze$/),
    });
  });

  test('-o yaml prints the same records', async () => {
    const result = await meshctl(['analyze', '-k=false', '-o', 'yaml', INJECTORS]);
    expect(result.stdout).toMatch(/^- code: MSH0139\n {2}level: Error\n {2}origin: MutatingWebhookConfiguration first-injector\n/);
  });

  test('-S suppresses a code on matching resources (with *), and a threshold above Error hides nothing it should not', async () => {
    const one = await meshctl(['analyze', '-k=false', '-S', 'MSH0139=MutatingWebhookConfiguration first-*', INJECTORS]);
    expect(one.stdout.trim().split('\n')).toHaveLength(1);
    expect(one.stdout).toMatch(/^Error \[MSH0139\] \(MutatingWebhookConfiguration second-injector /);
    const both = await meshctl(['analyze', '-k=false', '-S', 'MSH0139=MutatingWebhookConfiguration *', INJECTORS]);
    expect(both.code).toBe(0);
    expect(both.stdout).toBe('');
    expect(both.stderr).toBe(`\u2714 No validation issues found when analyzing ${INJECTORS}.\n`);
  });

  test('offline, the default ingress gateway stands in as the reference adds it: a Gateway selecting it is no finding, one selecting nothing is', async () => {
    const file = join(dir, 'gateways.yaml');
    const gateway = (name: string, selector: string) =>
      `apiVersion: networking.mesh.io/v1\nkind: Gateway\nmetadata: { name: ${name}, namespace: shop }\nspec:\n  selector: { ${selector} }\n  servers: [{ port: { number: 80, name: http, protocol: HTTP }, hosts: ["*"] }]\n`;
    writeFileSync(file, `${gateway('public', 'mesh: ingressgateway')}---\n${gateway('stray', 'app: nothing')}`);
    const result = await meshctl(['analyze', '-k=false', '--output-threshold', 'Error', file]);
    expect(result.stdout).toBe(`Error [MSH0101] (Gateway stray.shop ${file}:8) Referenced selector not found: "app=nothing"\n`);
    const off = join(dir, 'mesh-off.yaml');
    writeFileSync(off, 'ingressControllerMode: "OFF"\n');
    const withoutDefault = await meshctl(['analyze', '-k=false', '--output-threshold', 'Error', '--meshConfigFile', off, file]);
    expect(withoutDefault.stdout).toContain('(Gateway public.shop');
  });

  test('an invalid Gateway is reported (MSH0106) and still analysed: the VirtualService bound to it gets no false MSH0101', async () => {
    const file = join(dir, 'invalid-gateway.yaml');
    writeFileSync(
      file,
      'apiVersion: networking.mesh.io/v1\nkind: Gateway\nmetadata: { name: shop-gateway, namespace: shop }\nspec:\n  selector: { mesh: ingressgateway }\n  servers:\n' +
        '    - { port: { number: 80, name: http, protocol: HTTP }, hosts: [reviews.example.com] }\n    - { port: { number: 70000, name: bad, protocol: HTTP }, hosts: [other.example.com] }\n' +
        '---\napiVersion: networking.mesh.io/v1alpha3\nkind: VirtualService\nmetadata: { name: public, namespace: shop }\nspec:\n  hosts: [reviews.example.com]\n  gateways: [shop-gateway]\n  http: [{ route: [{ destination: { host: "*.example.com" } }] }]\n',
    );
    const result = await meshctl(['analyze', '-k=false', '--output-threshold', 'Error', file]);
    expect(result.code).toBe(79);
    expect(result.stdout).toBe(
      `Error [MSH0106] (Gateway shop-gateway.shop ${file}:1) Schema validation error: spec.servers[1].port.number: expected a port number from 1 to 65535 (0 only with a unix:// bind), got 70000\n`,
    );
  });

  test('a malformed suppression is a usage error (64); an unknown code only a warning', async () => {
    const bad = await meshctl(['analyze', '-k=false', '-S', 'MSH0139', INJECTORS]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toBe('Error: "MSH0139" is not a valid suppression value. See meshctl analyze --help\n');
    const unknown = await meshctl(['analyze', '-k=false', '-S', 'MSH9999=Pod *', INJECTORS]);
    expect(unknown.code).toBe(79);
    expect(unknown.stderr).toMatch(/^Warning: Supplied message code 'MSH9999' is an unknown message code and will not have any effect\.\n/);
  });

  test('colour: on with --color, off with TERM=dumb, and the exit code follows --failure-threshold and not --output-threshold', async () => {
    const colored = await meshctl(['analyze', '-k=false', '--color=true', INJECTORS]);
    expect(colored.stdout.startsWith('\u001b[1;31mError\u001b[0m [MSH0139]')).toBe(true);
    const dumb = await meshctl(['analyze', '-k=false', '--color=true', INJECTORS], { TERM: 'dumb' });
    expect(dumb.stdout.startsWith('Error [MSH0139]')).toBe(true);
    const hidden = await meshctl(['analyze', '-k=false', '--output-threshold', 'Error', '--failure-threshold', 'Error', INJECTORS]);
    expect(hidden.code).toBe(79);
    const badLevel = await meshctl(['analyze', '-k=false', '--failure-threshold', 'Fatal', INJECTORS]);
    expect(badLevel.code).toBe(2);
    expect(badLevel.stderr).toMatch(/--failure-threshold <Level>' argument 'Fatal' is invalid\. expected Info, Warning or Error/);
  });

  test('a missing path is named (64); -L lists the analyzers with their descriptions; -v names executed and skipped analyzers', async () => {
    const missing = await meshctl(['analyze', '-k=false', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('nope.yaml" does not exist');
    const list = await meshctl(['analyze', '-L']);
    expect(list.stdout).toMatch(/^\* webhook\.Analyzer:\n {4}Checks the validity of the mesh injection webhooks/m);
    const verbose = await meshctl(['analyze', '-k=false', '-v', join(PROJECT_ROOT, 'deploy', 'samples', 'policies')]);
    // Offline the files are the whole world: every analyzer runs, none is skipped for a kind no file holds.
    expect(verbose.stderr).toMatch(/Executed analyzers:\n(?: {4}\S+\n)* {4}webhook\.Analyzer\n(?: {4}\S+\n)*Skipped analyzers:\n(?!\s{4})/);
  });

  test('a file that is not YAML is reported, and the rest still analysed', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'kind: [unclosed\n');
    const result = await meshctl(['analyze', '-k=false', broken, join(PROJECT_ROOT, 'deploy', 'samples', 'policies', 'mesh-wide-strict.yaml')]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Error(s) adding files: ${broken}: `);
    expect(result.stderr).toMatch(/No validation issues found when analyzing .* \(but 1 file could not be parsed\)\.\n$/);
  });
});

describe('meshctl analyze: the live cluster', () => {
  test("the cluster's webhooks are analysed; files overlay them as an apply would", async () => {
    // A fresh cluster: the one finding users of the reference know, the default namespace not labelled for injection.
    const clean = await meshctl(['analyze']);
    expect(clean.stdout).toBe(
      "Info [MSH0102] (Namespace default) The namespace is not enabled for mesh injection. Run 'kubectl label namespace default mesh-injection=enabled' to enable it, or 'kubectl label namespace default mesh-injection=disabled' to explicitly mark it as not needing injection.\n",
    );
    expect(clean.stderr).toBe('');
    expect(clean.code).toBe(0);
    const target = { kubeconfig: join(dir, 'kubeconfig'), home: dir };
    const first = INJECTORS;
    expect((await kubectl(target, ['apply', '-f', first])).code).toBe(0);
    const found = await meshctl(['analyze', '-A']);
    expect(found.code).toBe(79);
    // From the cluster: no file reference.
    expect(found.stdout).toContain('Error [MSH0139] (MutatingWebhookConfiguration first-injector) Webhook overlaps');
    expect(found.stderr).toContain('Error: Analyzers found issues when analyzing all namespaces.');
    expect((await kubectl(target, ['delete', '-f', first])).code).toBe(0);
  });

  test('without -A only the namespace analysed is reported; files without a namespace land in it', async () => {
    const target = { kubeconfig: join(dir, 'kubeconfig'), home: dir };
    const workloads = join(TESTDATA, 'problems', 'workloads.yaml');
    expect((await kubectl(target, ['apply', '-f', workloads])).code).toBe(0);
    const shop = await meshctl(['analyze', '-n', 'shop', join(TESTDATA, 'problems', 'policies.yaml')]);
    expect(shop.code).toBe(79);
    expect(shop.stdout).toContain('(VirtualService reviews.shop ');
    expect(shop.stdout).not.toContain('legacy.plain');
    const plain = await meshctl(['analyze', '-n', 'plain']);
    expect(plain.stdout).toContain('Warning [MSH0144] (Pod legacy.plain) User ID (UID) 1337 is reserved for the sidecar proxy.');
    expect(plain.stdout).not.toContain('.shop');
    // From the cluster, the VirtualService is gone: its problems went with the file.
    expect((await meshctl(['analyze', '-n', 'shop'])).stdout).not.toContain('VirtualService');
    const deleted = await kubectl(target, ['delete', '--ignore-not-found', '-f', workloads]);
    expect(deleted.stderr).toBe('');
  });

  test('--timeout bounds an API server that never answers', async () => {
    const result = await runBin('meshctl', ['-c', join(dir, 'silent-kubeconfig'), 'analyze', '--timeout', '500ms'], {
      env: { HOME: '/nonexistent' },
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Error: analysis timed out after 0.5s (--timeout)\n');
  });
});
