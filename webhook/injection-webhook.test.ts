import { describe, expect, test } from '@jest/globals';
import { newMetrics, newNopLogger } from '../controllers/runtime/index.js';
import { DEFAULT_MESH_CONFIG } from '../crds/index.js';
import type { AdmissionRequest } from './admission-review.js';
import { BUILTIN_INJECTOR_CONFIG } from './inject/index.js';
import { injectEnvsOfPath, newInjectionWebhook } from './injection-webhook.js';

const settings = { injectEnabled: true, injectionWebhookConfigName: 'mesh-sidecar-injector', legacyFsGroup: true, rewriteProbeLegacyLocalhost: false, revision: '' };

function podRequest(pod: Record<string, unknown>): AdmissionRequest {
  return {
    uid: 'u1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    name: '',
    namespace: 'foo',
    operation: 'CREATE',
    object: pod,
    dryRun: false,
  };
}

const pod = (containers: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { generateName: 'httpbin-', labels: { app: 'httpbin' } },
  spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `c${i}`, image: 'app' })) },
});

describe('the injection webhook', () => {
  test('a broken new configuration is refused and the last good one keeps serving', async () => {
    const metrics = newMetrics('pilot-discovery');
    const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics, log: newNopLogger() });
    expect(webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' })).toBe(true);
    expect(webhook.offer({ text: { config: 'templates:\n  sidecar: "{{#if x}}"\n', values: '{}' }, origin: 'ConfigMap mesh-system/mesh-sidecar-injector' })).toBe(false);
    expect(webhook.offer({ text: { config: 'policy: [', values: '{}' }, origin: 'ConfigMap mesh-system/mesh-sidecar-injector' })).toBe(false);
    const response = await webhook.route.handle(podRequest(pod(2)), '/inject');
    expect(response.allowed).toBe(true);
    expect(JSON.stringify(response.patch)).toContain('mesh-proxy');
    const requests = await metrics.registry.getSingleMetric('sidecar_injection_success_total')?.get();
    expect(requests?.values[0]?.value).toBe(1);
  });

  test('a pod with 500 containers is injected', async () => {
    const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics: newMetrics('pilot-discovery'), log: newNopLogger() });
    webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
    const response = await webhook.route.handle(podRequest(pod(500)), '/inject');
    expect(response.allowed).toBe(true);
  });

  test('an unknown template is a denial naming the ones there are', async () => {
    const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics: newMetrics('pilot-discovery'), log: newNopLogger() });
    webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
    const withTemplate = { ...pod(1), metadata: { name: 'x', annotations: { 'inject.mesh.io/templates': 'x' } } };
    const response = await webhook.route.handle(podRequest(withTemplate), '/inject');
    expect(response).toEqual({ allowed: false, message: expect.stringContaining('requested template "x" not found; have gateway, grpc-agent, sidecar') as unknown as string });
  });

  test('the URL carries extra proxy env, in both of the reference’s forms', () => {
    expect(injectEnvsOfPath('/inject')).toEqual({});
    expect(injectEnvsOfPath('/inject/cluster/c1/net/n1/foo/bar')).toEqual({ MESH_META_CLUSTER_ID: 'c1', MESH_META_NETWORK: 'n1', FOO: 'bar' });
    expect(injectEnvsOfPath('/inject/:ENV:MESH_META_CLUSTER_ID=c2:ENV:X=y')).toEqual({ MESH_META_CLUSTER_ID: 'c2', X: 'y' });
  });
});
