import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAEMON_SCOPES, loadSettings, newLogging, newManager, newMetrics, newNopLogger, parseLevelSpec } from '../runtime/index.js';
import { DEFAULT_MESH_CONFIG } from '../crds/index.js';
import { curl } from '../testing/curl.js';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';
import { waitFor } from '../testing/wait-for.js';
import { BUILTIN_INJECTOR_CONFIG } from './inject/index.js';
import { setupWebhookWithManager } from './setup.js';

// The webhooks as the daemon registers them in local mode (no orchestrator): the manager starts the
// HTTPS server; INJECT_ENABLED decides whether /inject exists; the injector config is read from
// the local folder and swapped as it changes, a broken version refused.
const dirs: string[] = [];
let stopManager: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopManager?.();
  stopManager = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function startWebhooks(env: Record<string, string>, injectDir?: string): Promise<{ url: string; caFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-setup-'));
  dirs.push(dir);
  const ca = await certificateAuthority(dir, 'root');
  const pair = await signedCertificate(dir, 'meshd', 'IP:127.0.0.1', ca);
  const identity = { certChainPem: readFileSync(pair.certFile, 'utf8'), keyPem: readFileSync(pair.keyFile, 'utf8') };
  const manager = newManager({ log: newNopLogger() });
  const webhooks = setupWebhookWithManager(manager, {
    settings: loadSettings('pilot-discovery', env),
    address: { host: '127.0.0.1', port: 0 },
    serving: () => Promise.resolve({ identity: { watch: (listener) => (listener(identity), () => undefined) } }),
    namespace: 'mesh-system',
    meshConfig: () => DEFAULT_MESH_CONFIG,
    ...(injectDir ? { injectDir } : {}),
    metrics: newMetrics('pilot-discovery'),
    logging: newLogging({ outputLevels: parseLevelSpec('default:none') }, DAEMON_SCOPES),
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  stopManager = async () => {
    stop.abort();
    await running;
  };
  await webhooks.server.waitForReady();
  return { url: `https://127.0.0.1:${webhooks.server.boundAddress().port}`, caFile: ca.certFile };
}

const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'foo',
    operation: 'CREATE',
    object: { metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'app' }] } },
  },
});
const post = (target: { url: string; caFile: string }, path: string) =>
  curl(['--cacert', target.caFile, '-H', 'Content-Type: application/json', '--data-binary', review, `${target.url}${path}`]);
const injectedContainers = (body: string): string =>
  Buffer.from((JSON.parse(body) as { response: { patch?: string } }).response.patch ?? '', 'base64').toString();

describe('the webhooks registered on a manager', () => {
  test('INJECT_ENABLED=false serves no /inject; /validate still answers', async () => {
    const target = await startWebhooks({ INJECT_ENABLED: 'false' });
    expect((await post(target, '/inject')).code).toBe('404');
    expect((await post(target, '/validate')).code).toBe('200');
  });

  test('local mode: the injector config of the folder is used, swapped as it changes, a broken version refused', async () => {
    const injectDir = mkdtempSync(join(tmpdir(), 'inject-dir-'));
    dirs.push(injectDir);
    mkdirSync(injectDir, { recursive: true });
    const withContainer = (name: string): string =>
      `${BUILTIN_INJECTOR_CONFIG.config}\n`
        .replace('templates:', `templates:\n  marker: |\n    spec:\n      containers:\n      - name: ${name}\n        image: marker\n`)
        .replace(/defaultTemplates:\n {2}- sidecar\n/, 'defaultTemplates: [sidecar, marker]\n');
    writeFileSync(join(injectDir, 'values'), BUILTIN_INJECTOR_CONFIG.values);
    writeFileSync(join(injectDir, 'config'), withContainer('first-marker'));
    const target = await startWebhooks({}, injectDir);
    expect(injectedContainers((await post(target, '/inject')).body)).toContain('first-marker');
    writeFileSync(join(injectDir, 'config'), withContainer('second-marker'));
    await waitFor(async () => injectedContainers((await post(target, '/inject')).body).includes('second-marker'), {
      timeoutMs: 10_000,
      description: 'the new config served',
    });
    writeFileSync(join(injectDir, 'config'), 'templates: {sidecar: "{{#if}}"}\n');
    writeFileSync(join(injectDir, 'values'), BUILTIN_INJECTOR_CONFIG.values);
    // Whatever the watcher has seen by now, the last good version keeps serving.
    expect(injectedContainers((await post(target, '/inject')).body)).toContain('second-marker');
  });
});
