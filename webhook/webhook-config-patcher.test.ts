import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { newManager, newMetrics, newNopLogger } from '../runtime/index.js';
import { waitFor } from '../testing/wait-for.js';
import type { CaBundleSource } from './serving-identity.js';
import { addWebhookConfigPatcher } from './webhook-config-patcher.js';

// The controller that keeps the webhook configurations' caBundle, against the API server double:
// a root rotation (a new bundle from the CA) is patched again into every configuration of the
// revision, and configurations of other revisions are left alone.
let kube: ApiServerDouble;
const stop = new AbortController();
let running: Promise<void>;
const listeners = new Set<(bundle: string) => void>();
const bundles: CaBundleSource = {
  watch(listener) {
    listeners.add(listener);
    listener('-----BEGIN CERTIFICATE-----\nroot-A\n-----END CERTIFICATE-----\n');
    return () => listeners.delete(listener);
  },
};

const injector = (name: string, revision: string) => ({
  metadata: { name, labels: { 'mesh.io/rev': revision } },
  webhooks: [
    {
      name: 'namespace.sidecar-injector.mesh.io',
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      clientConfig: { url: 'https://127.0.0.1:1/inject', caBundle: '' },
    },
  ],
});

beforeAll(async () => {
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  const admission = kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api);
  await admission.createMutatingWebhookConfiguration({ body: injector('mesh-sidecar-injector', 'default') as never });
  await admission.createMutatingWebhookConfiguration({ body: injector('mesh-revision-tag-prod', 'default') as never });
  await admission.createMutatingWebhookConfiguration({ body: injector('mesh-sidecar-injector-canary', 'canary') as never });
  const manager = newManager({ log: newNopLogger() });
  addWebhookConfigPatcher({
    manager,
    kubeConfig: kube.kubeConfig(),
    revision: '',
    namespace: 'mesh-system',
    injectionWebhookConfigName: 'mesh-sidecar-injector',
    caBundle: () => Promise.resolve(bundles),
    metrics: newMetrics('pilot-discovery'),
    log: newNopLogger(),
  });
  running = manager.start(stop.signal);
});

afterAll(async () => {
  stop.abort();
  await running;
  await kube?.close();
});

const bundleOf = async (name: string): Promise<string> => {
  const config = await kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name });
  return Buffer.from(config.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString();
};

describe('the webhook configuration patcher', () => {
  test('patches the revision’s injection webhooks (revision tags too), again after a root rotation; other revisions untouched', async () => {
    await waitFor(async () => (await bundleOf('mesh-sidecar-injector')).includes('root-A') && (await bundleOf('mesh-revision-tag-prod')).includes('root-A'), {
      timeoutMs: 10_000,
      description: 'root A patched',
    });
    for (const listener of listeners)
      listener('-----BEGIN CERTIFICATE-----\nroot-A\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nroot-B\n-----END CERTIFICATE-----\n');
    await waitFor(async () => (await bundleOf('mesh-sidecar-injector')).includes('root-B') && (await bundleOf('mesh-revision-tag-prod')).includes('root-B'), {
      timeoutMs: 10_000,
      description: 'the rotated bundle patched',
    });
    expect(await bundleOf('mesh-sidecar-injector-canary')).toBe('');
  });
});
