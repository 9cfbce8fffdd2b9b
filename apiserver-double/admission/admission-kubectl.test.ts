import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { toolPath } from '../../testing/tools.js';
import { startApiServerDouble } from '../index.js';
import type { ApiServerDouble } from '../index.js';
import { configureWebhooks, removeWebhookConfigurations, startWebhookTestServer, webhookEntry } from './testing/webhook-test-server.js';
import type { JsonObject, WebhookTestServer } from './testing/webhook-test-server.js';

const run = promisify(execFile);

describe('admission webhooks: the real kubectl', () => {
  let apiServer: ApiServerDouble;
  let webhooks: WebhookTestServer;
  let work: string;
  let kubeconfig: string;
  let kubectlPath: string;

  const kubectl = async (...args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> => {
    try {
      const { stdout, stderr } = await run(kubectlPath, ['--kubeconfig', kubeconfig, ...args], { env: { HOME: work }, timeout: 20_000 });
      return { stdout, stderr, exitCode: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', exitCode: typeof e.code === 'number' ? e.code : -1 };
    }
  };
  const applyYaml = async (yaml: string, ...flags: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> => {
    const file = join(work, `manifest-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, yaml);
    return kubectl('apply', '-f', file, ...flags);
  };
  const namespaceAndConfigMap = (namespace: string, name: string): string =>
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n  labels:\n    admission-test: ${namespace}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  a: "1"\n`;
  const inNamespace = (namespace: string): JsonObject => ({ namespaceSelector: { matchLabels: { 'admission-test': namespace } } });
  const byService = (path: string): JsonObject => ({ service: { namespace: 'mesh-system', name: 'webhook', path }, caBundle: webhooks.caBundle });

  beforeAll(async () => {
    kubectlPath = await toolPath('kubectl');
    work = await mkdtemp(join(tmpdir(), 'mesh-admission-kubectl-'));
    webhooks = await startWebhookTestServer(work, 'webhook.mesh-system.svc');
    apiServer = await startApiServerDouble({
      bookmarkIntervalMs: 0,
      serviceResolver: (namespace, name, port) =>
        namespace === 'mesh-system' && name === 'webhook' && port === 443 ? { host: '127.0.0.1', port: webhooks.port } : undefined,
    });
    kubeconfig = join(work, 'kubeconfig');
    await apiServer.writeKubeconfig(kubeconfig);
  }, 120_000);

  afterEach(async () => removeWebhookConfigurations(apiServer.url));

  afterAll(async () => {
    await apiServer?.close();
    await webhooks?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test("a mutating webhook's label shows in kubectl get -o yaml", async () => {
    webhooks.answer('/label', (request) => {
      const labels = ((request['object'] as JsonObject)['metadata'] as JsonObject)['labels'] ?? {};
      return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { ...(labels as JsonObject), 'mesh.io/admitted': 'yes' } }] };
    });
    await configureWebhooks(apiServer.url, 'mutating', 'label', [webhookEntry('label.example.io', byService('/label'), inNamespace('kubectl-mutate'))]);

    const applied = await applyYaml(namespaceAndConfigMap('kubectl-mutate', 'labelled'));
    expect(applied).toMatchObject({ exitCode: 0, stderr: '' });
    expect(applied.stdout).toContain('configmap/labelled created');

    const got = await kubectl('get', 'configmap', 'labelled', '-n', 'kubectl-mutate', '-o', 'yaml');
    const object = parseYaml(got.stdout) as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
    expect(object.metadata.labels).toEqual({ 'mesh.io/admitted': 'yes' });
    expect(object.data).toEqual({ a: '1' });
    const review = webhooks.reviewsAt('/label').at(-1) as JsonObject;
    expect(review['apiVersion']).toBe('admission.k8s.io/v1');
    expect(review['request']).toMatchObject({
      operation: 'CREATE',
      name: 'labelled',
      namespace: 'kubectl-mutate',
      dryRun: false,
      resource: { group: '', version: 'v1', resource: 'configmaps' },
    });
  });

  test('a validating denial fails kubectl apply with exit code 1 and the webhook message', async () => {
    webhooks.answer('/deny', () => ({ allowed: false, status: { message: 'configmaps named "bad" are not welcome' } }));
    await configureWebhooks(apiServer.url, 'validating', 'deny', [
      webhookEntry('x.example.io', { url: `${webhooks.url}/deny`, caBundle: webhooks.caBundle }, inNamespace('kubectl-deny')),
    ]);

    const applied = await applyYaml(namespaceAndConfigMap('kubectl-deny', 'bad'));
    expect(applied.exitCode).toBe(1);
    expect(applied.stderr).toContain('admission webhook "x.example.io" denied the request: configmaps named "bad" are not welcome');
    expect(apiServer.objects('v1', 'ConfigMap', 'kubectl-deny')).toEqual([]);
  });

  test('a warning of a webhook is printed by kubectl as Warning: …', async () => {
    webhooks.answer('/warn', () => ({ allowed: true, warnings: ['the "a" key is deprecated, use "b"'] }));
    await configureWebhooks(apiServer.url, 'validating', 'warn', [webhookEntry('warn.example.io', byService('/warn'), inNamespace('kubectl-warn'))]);

    const applied = await applyYaml(namespaceAndConfigMap('kubectl-warn', 'warned'));
    expect(applied.exitCode).toBe(0);
    expect(applied.stderr).toContain('Warning: the "a" key is deprecated, use "b"');
    expect(apiServer.objects('v1', 'ConfigMap', 'kubectl-warn').map((o) => o.metadata?.name)).toEqual(['warned']);
  });

  test('kubectl apply --dry-run=server calls the webhooks with dryRun true and stores nothing', async () => {
    webhooks.answer('/dry-label', () => ({ allowed: true, patch: [{ op: 'add', path: '/data/b', value: 'from-webhook' }] }));
    await applyYaml('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubectl-dry\n  labels:\n    admission-test: kubectl-dry\n');
    await configureWebhooks(apiServer.url, 'mutating', 'dry-label', [
      webhookEntry('dry-label.example.io', byService('/dry-label'), inNamespace('kubectl-dry')),
    ]);
    await configureWebhooks(apiServer.url, 'validating', 'dry-record', [
      webhookEntry('dry-record.example.io', byService('/dry-record'), inNamespace('kubectl-dry')),
    ]);

    const applied = await applyYaml(namespaceAndConfigMap('kubectl-dry', 'dry'), '--dry-run=server', '-o', 'yaml');
    expect(applied.exitCode).toBe(0);
    const output = parseYaml(applied.stdout) as { kind: string; items: JsonObject[] };
    expect(output.kind).toBe('List');
    expect(output.items.find((o) => o['kind'] === 'ConfigMap')?.['data']).toEqual({ a: '1', b: 'from-webhook' });
    const validated = webhooks.reviewsAt('/dry-record').at(-1)?.['request'] as JsonObject;
    expect(validated).toMatchObject({ dryRun: true, operation: 'CREATE', options: { dryRun: ['All'] }, object: { data: { a: '1', b: 'from-webhook' } } });
    expect(webhooks.reviewsAt('/dry-label').at(-1)?.['request']).toMatchObject({ dryRun: true });
    expect(apiServer.objects('v1', 'ConfigMap', 'kubectl-dry')).toEqual([]);
  });
});
