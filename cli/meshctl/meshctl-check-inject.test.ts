import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, type V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl x check-inject against the API server double holding the injection webhooks the meshd
// chart renders for the default revision and a canary (with a revision tag `prod` on it).
let kube: ApiServerDouble;
let dir: string;
const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });

async function injectors(args: readonly string[]): Promise<V1MutatingWebhookConfiguration[]> {
  const rendered = await helm(['template', 'meshd', join(CHARTS_DIR, 'meshd'), '--namespace', 'mesh-system', ...args], { workDir: dir });
  return parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as V1MutatingWebhookConfiguration | null)
    .filter((o): o is V1MutatingWebhookConfiguration => o?.kind === 'MutatingWebhookConfiguration');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'check-inject-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const core = kube.kubeConfig().makeApiClient(CoreV1Api);
  const namespaces: Record<string, Record<string, string>> = { foo: { 'mesh-injection': 'enabled' }, bar: { 'mesh.io/rev': 'prod' }, plain: {} };
  for (const [name, labels] of Object.entries(namespaces)) await core.createNamespace({ body: { metadata: { name, labels } } });
  const pod = (namespace: string, name: string, labels: Record<string, string>) =>
    core.createNamespacedPod({ namespace, body: { metadata: { name, labels }, spec: { containers: [{ name: 'app', image: 'app' }] } } });
  await pod('foo', 'app', { app: 'app' });
  await pod('foo', 'opted-out', { app: 'app', 'sidecar.mesh.io/inject': 'false' });
  await pod('bar', 'app', { app: 'app' });
  await pod('plain', 'app', { app: 'app' });
  // After the pods: the double's admission chain would call these webhooks (no daemon serves them here).
  const admission = kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
  for (const body of [...(await injectors([])), ...(await injectors(['--set', 'revision=canary', '--set', 'revisionTags={prod}']))])
    await admission.createMutatingWebhookConfiguration({ body });
}, 60_000);

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl x check-inject', () => {
  test('a pod of a namespace labelled mesh-injection=enabled: the default injector, by its namespace label (golden)', async () => {
    const result = await meshctl('x', 'check-inject', 'app', '-n', 'foo');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectGoldenText(join(PROJECT_ROOT, 'cli', 'testdata', 'check-inject', 'enabled-namespace.golden.txt'), result.stdout);
    expect(result.stdout).toMatch(/^WEBHOOK +REVISION +INJECTED +REASON\nmesh-sidecar-injector +default +✔ +Namespace label mesh-injection=enabled matches\n/);
  });

  test("a namespace labelled with a revision tag: the tag's webhook injects", async () => {
    const result = await meshctl('x', 'check-inject', 'app.bar');
    expect(result.stdout).toMatch(/\nmesh-revision-tag-prod +prod +✔ +Namespace label mesh\.io\/rev=prod matches\n/);
    expect(result.stdout.match(/✔/g)).toHaveLength(1);
  });

  test('no injector for an unlabelled namespace, each saying what it would need; an opted-out pod says so', async () => {
    const plain = await meshctl('x', 'check-inject', 'app', '-n', 'plain');
    expect(plain.stdout).not.toContain('✔');
    expect(plain.stdout).toMatch(
      /mesh-sidecar-injector +default +✘ +No matching namespace labels \(mesh\.io\/rev=default, mesh-injection=enabled\) or pod labels \(mesh\.io\/rev=default, sidecar\.mesh\.io\/inject=true\)\n/,
    );
    const optedOut = await meshctl('x', 'check-inject', 'pod/opted-out.foo');
    expect(optedOut.stdout).toContain('Pod has sidecar.mesh.io/inject=false label, preventing injection');
    expect(optedOut.stdout).not.toContain('✔');
  });

  test('--labels checks a pod to be: a pod label picks the canary revision', async () => {
    const result = await meshctl('x', 'check-inject', '-l', 'app=new,mesh.io/rev=canary', '-n', 'plain');
    expect(result.stdout).toMatch(/\nmesh-sidecar-injector-canary +canary +✔ +Pod label mesh\.io\/rev=canary matches\n/);
    expect(await meshctl('x', 'check-inject')).toMatchObject({ code: 64, stderr: 'Error: check-inject requires a pod or --labels\n' });
    expect(await meshctl('x', 'check-inject', '-l', 'novalue')).toMatchObject({ code: 64 });
  });
});
