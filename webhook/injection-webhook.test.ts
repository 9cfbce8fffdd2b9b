import { describe, expect, test } from '@jest/globals';
import { newMetrics, newNopLogger } from '../runtime/index.js';
import { DEFAULT_MESH_CONFIG, type MeshConfig } from '../crds/index.js';
import type { AdmissionRequest } from './admission-review.js';
import { BUILTIN_INJECTOR_CONFIG, compileInjector, newTemplateCompiler, type Injector, type InjectorConfig } from './inject/index.js';
import { injectEnvsOfPath, newInjectionWebhook } from './injection-webhook.js';

const templates = newTemplateCompiler();

const settings = {
  injectEnabled: true,
  injectionWebhookConfigName: 'mesh-sidecar-injector',
  legacyFsGroup: true,
  rewriteProbeLegacyLocalhost: false,
  revision: '',
};

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
  test('a pod object without metadata in a request without a namespace is answered, not thrown (found by fuzzing)', async () => {
    const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics: newMetrics('pilot-discovery'), log: newNopLogger() });
    expect(webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' })).toBe(true);
    const response = await webhook.route.handle({ ...podRequest({}), namespace: '' }, '/inject');
    expect(typeof response.allowed).toBe('boolean');
  });

  test('a broken new configuration is refused and the last good one keeps serving', async () => {
    const metrics = newMetrics('pilot-discovery');
    const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics, log: newNopLogger() });
    expect(webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' })).toBe(true);
    expect(
      webhook.offer({ text: { config: 'templates:\n  sidecar: "{{#if x}}"\n', values: '{}' }, origin: 'ConfigMap mesh-system/mesh-sidecar-injector' }),
    ).toBe(false);
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
    expect(response).toEqual({
      allowed: false,
      message: expect.stringContaining('requested template "x" not found; have gateway, grpc-agent, sidecar') as unknown as string,
    });
  });

  test('the URL carries extra proxy env, in both of the reference’s forms', () => {
    expect(injectEnvsOfPath('/inject')).toEqual({});
    expect(injectEnvsOfPath('/inject/cluster/c1/net/n1/foo/bar')).toEqual({ MESH_META_CLUSTER_ID: 'c1', MESH_META_NETWORK: 'n1', FOO: 'bar' });
    expect(injectEnvsOfPath('/inject/:ENV:MESH_META_CLUSTER_ID=c2:ENV:X=y')).toEqual({ MESH_META_CLUSTER_ID: 'c2', X: 'y' });
  });

  describe('the patch cache', () => {
    /** The real injector, counting the injections it runs. */
    const countingCompile = () => {
      const counts = { compiled: 0, injected: 0 };
      const compile = (config: InjectorConfig): Injector => {
        counts.compiled++;
        const injector = compileInjector(config, { templates });
        return { ...injector, inject: (params) => (counts.injected++, injector.inject(params)) };
      };
      return { counts, compile };
    };
    const labelled = (app: string) => ({ ...pod(2), metadata: { generateName: 'httpbin-', labels: { app } } });
    const patchOf = async (webhook: ReturnType<typeof newInjectionWebhook>, object: Record<string, unknown>, path = '/inject') => {
      const response = await webhook.route.handle(podRequest(object), path);
      expect(response.allowed).toBe(true);
      return JSON.stringify(response.patch);
    };

    test('the same pod twice gets the same patch from one injection; every request still counts', async () => {
      const { counts, compile } = countingCompile();
      const metrics = newMetrics('pilot-discovery');
      const webhook = newInjectionWebhook({ settings, meshConfig: () => DEFAULT_MESH_CONFIG, metrics, log: newNopLogger(), compile });
      webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
      const first = await patchOf(webhook, labelled('httpbin'));
      const second = await patchOf(webhook, labelled('httpbin'));
      expect(second).toBe(first);
      expect(counts.injected).toBe(1);
      const counted = async (name: string) => (await metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value;
      expect(await counted('sidecar_injection_requests_total')).toBe(2);
      expect(await counted('sidecar_injection_success_total')).toBe(2);
    });

    test('a changed label or URL is injected anew', async () => {
      const { counts, compile } = countingCompile();
      const webhook = newInjectionWebhook({
        settings,
        meshConfig: () => DEFAULT_MESH_CONFIG,
        metrics: newMetrics('pilot-discovery'),
        log: newNopLogger(),
        compile,
      });
      webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
      const httpbin = await patchOf(webhook, labelled('httpbin'));
      const other = await patchOf(webhook, labelled('other'));
      expect(other).not.toBe(httpbin);
      expect(other).toContain('other');
      const withEnv = await patchOf(webhook, labelled('httpbin'), '/inject/cluster/east');
      expect(withEnv).not.toBe(httpbin);
      expect(withEnv).toContain('east');
      expect(counts.injected).toBe(3);
    });

    test('a new injector configuration, or a new mesh config, recomputes', async () => {
      const { counts, compile } = countingCompile();
      let meshConfig: MeshConfig = DEFAULT_MESH_CONFIG;
      const webhook = newInjectionWebhook({ settings, meshConfig: () => meshConfig, metrics: newMetrics('pilot-discovery'), log: newNopLogger(), compile });
      webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
      const before = await patchOf(webhook, labelled('httpbin'));
      const values = JSON.stringify({
        ...(JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as Record<string, unknown>),
        global: { ...(JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: Record<string, unknown> }).global, hub: 'registry.example/mesh' },
      });
      expect(webhook.offer({ text: { config: BUILTIN_INJECTOR_CONFIG.config, values }, origin: 'ConfigMap mesh-system/mesh-sidecar-injector' })).toBe(true);
      const after = await patchOf(webhook, labelled('httpbin'));
      expect(counts).toEqual({ compiled: 2, injected: 2 });
      expect(after).not.toBe(before);
      expect(after).toContain('registry.example/mesh/proxyv2');
      meshConfig = { ...DEFAULT_MESH_CONFIG, enablePrometheusMerge: !DEFAULT_MESH_CONFIG.enablePrometheusMerge };
      expect(await patchOf(webhook, labelled('httpbin'))).not.toBe(after);
      expect(counts.injected).toBe(3);
    });

    test('pods that never come back turn lookups off but for a sample; a pod that comes back is soon served from the cache again', async () => {
      const { counts, compile } = countingCompile();
      const webhook = newInjectionWebhook({
        settings,
        meshConfig: () => DEFAULT_MESH_CONFIG,
        metrics: newMetrics('pilot-discovery'),
        log: newNopLogger(),
        compile,
      });
      webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
      for (let i = 0; i < 200; i++) await patchOf(webhook, labelled(`app-${i}`));
      expect(counts.injected).toBe(200);
      const same = await patchOf(webhook, labelled('same'));
      for (let i = 0; i < 30; i++) expect(await patchOf(webhook, labelled('same'))).toBe(same);
      // Kept by a sampled request, found by the next sampled one: then every request is served.
      expect(counts.injected).toBeLessThanOrEqual(200 + 17);
      const before = counts.injected;
      for (let i = 0; i < 10; i++) await patchOf(webhook, labelled('same'));
      expect(counts.injected).toBe(before);
    });

    test('the cache is bounded: the least recently used patch is the one computed again', async () => {
      const { counts, compile } = countingCompile();
      const webhook = newInjectionWebhook({
        settings,
        meshConfig: () => DEFAULT_MESH_CONFIG,
        metrics: newMetrics('pilot-discovery'),
        log: newNopLogger(),
        compile,
        cacheEntries: 2,
      });
      webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' });
      for (const app of ['a', 'b', 'a', 'c', 'a', 'b']) await patchOf(webhook, labelled(app));
      // a, b computed; a served; c computed (b out); a served; b computed again.
      expect(counts.injected).toBe(4);
    });
  });
});
