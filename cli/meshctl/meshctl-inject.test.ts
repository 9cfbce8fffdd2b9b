import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AdmissionregistrationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { runBin } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';
import { BUILTIN_INJECTOR_CONFIG } from '../../webhook/inject/index.js';
import { newAdmissionServer } from '../../webhook/admission-server.js';
import { newInjectionWebhook } from '../../webhook/injection-webhook.js';
import { newMetrics, newNopLogger } from '../../runtime/index.js';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { certificateAuthority, signedCertificate } from '../../testing/openssl.js';

// meshctl orch-inject, x orch-uninject and x injector list, run as the built program.
let dir: string;
let kube: ApiServerDouble;
const NO_CLUSTER = { HOME: '/nonexistent', KUBECONFIG: '' };

const APP = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: httpbin
  namespace: foo
spec:
  selector:
    matchLabels: {app: httpbin}
  template:
    metadata:
      labels: {app: httpbin, version: v1}
    spec:
      containers:
      - name: httpbin
        image: kennethreitz/httpbin
        ports: [{containerPort: 80}]
        readinessProbe:
          httpGet: {path: /status/200, port: 80}
---
apiVersion: v1
kind: Service
metadata: {name: httpbin, namespace: foo}
spec:
  ports: [{port: 8000, targetPort: 80}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: foo}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {app: nightly}
        spec:
          restartPolicy: Never
          containers: [{name: job, image: busybox}]
`;

const docs = (text: string): Record<string, unknown>[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Record<string, unknown>)
    .filter((d) => d !== null);
type PodSpec = { containers: { name: string; image?: string }[]; initContainers?: { name: string }[] };
const templateSpec = (doc: Record<string, unknown>): PodSpec => (doc as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-inject-'));
  writeFileSync(join(dir, 'app.yaml'), APP);
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
});

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl orch-inject with neither files nor a cluster (the built-in defaults)', () => {
  test('injects the workloads, passes other kinds through, keeps the documents in order; x orch-uninject reverses it exactly', async () => {
    // The built program, with no cluster anywhere it could look.
    const injected = await runBin('meshctl', ['orch-inject', '-f', join(dir, 'app.yaml')], { env: NO_CLUSTER });
    expect(injected.stderr).toBe('');
    expect(injected.code).toBe(0);
    const out = docs(injected.stdout);
    expect(out.map((d) => d['kind'])).toEqual(['Deployment', 'Service', 'CronJob']);
    expect(templateSpec(out[0] ?? {}).containers.map((c) => c.name)).toEqual(['httpbin', 'mesh-proxy']);
    expect(templateSpec(out[0] ?? {}).initContainers?.map((c) => c.name)).toEqual(['mesh-init']);
    expect(out[1]).toEqual(docs(APP)[1]);
    const cron = (out[2] as { spec: { jobTemplate: { spec: { template: { spec: PodSpec } } } } }).spec.jobTemplate.spec.template.spec;
    expect(cron.containers.map((c) => c.name)).toEqual(['job', 'mesh-proxy']);

    writeFileSync(join(dir, 'injected.yaml'), injected.stdout);
    const uninjected = await runMeshctlInProcess(['x', 'orch-uninject', '-f', join(dir, 'injected.yaml'), '-o', join(dir, 'uninjected.yaml')], NO_CLUSTER);
    expect(uninjected.code).toBe(0);
    expect(docs(readFileSync(join(dir, 'uninjected.yaml'), 'utf8'))).toEqual(docs(APP));
  });

  test('bad flags are usage errors (exit 2) that name the flag', async () => {
    const none = await runMeshctlInProcess(['orch-inject'], NO_CLUSTER);
    expect([none.code, none.stderr]).toEqual([2, 'Error: filename not specified (see --filename or -f)\n']);
    const both = await runMeshctlInProcess(
      ['orch-inject', '-f', join(dir, 'app.yaml'), '--injectConfigFile', join(dir, 'app.yaml'), '--injectConfigMapName', 'x'],
      NO_CLUSTER,
    );
    expect([both.code, both.stderr]).toEqual([2, 'Error: --injectConfigFile and --injectConfigMapName cannot be used together\n']);
    const missing = await runMeshctlInProcess(['orch-inject', '-f', join(dir, 'nope.yaml')], NO_CLUSTER);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^Error: --filename: cannot read .*nope\.yaml/);
  });
});

describe('meshctl orch-inject with files and with a cluster', () => {
  test('fully offline with the three files', async () => {
    const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: { hub: string } };
    values.global.hub = 'registry.example.com/offline';
    writeFileSync(join(dir, 'values.json'), JSON.stringify(values));
    writeFileSync(join(dir, 'inject-config.yaml'), BUILTIN_INJECTOR_CONFIG.config);
    writeFileSync(join(dir, 'mesh.yaml'), 'trustDomain: offline.example\n');
    const result = await runMeshctlInProcess(
      [
        'orch-inject',
        '-f',
        join(dir, 'app.yaml'),
        '--injectConfigFile',
        join(dir, 'inject-config.yaml'),
        '--meshConfigFile',
        join(dir, 'mesh.yaml'),
        '--valuesFile',
        join(dir, 'values.json'),
        '-c',
        join(dir, 'nowhere'),
      ],
      NO_CLUSTER,
    );
    expect(result.code).toBe(0);
    const proxy = templateSpec(docs(result.stdout)[0] ?? {}).containers.find((c) => c.name === 'mesh-proxy') as unknown as {
      image: string;
      env: { name: string; value?: string }[];
    };
    expect(proxy.image).toBe('registry.example.com/offline/proxyv2:latest');
    expect(proxy.env.find((e) => e.name === 'TRUST_DOMAIN')?.value).toBe('offline.example');
  });

  test('from the cluster’s ConfigMaps, with the revision suffix', async () => {
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'mesh-system' } } });
    const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: { hub: string } };
    values.global.hub = 'registry.example.com/canary';
    await core.createNamespacedConfigMap({
      namespace: 'mesh-system',
      body: {
        metadata: { name: 'mesh-sidecar-injector-canary', labels: { 'mesh.io/rev': 'canary' } },
        data: { config: BUILTIN_INJECTOR_CONFIG.config, values: JSON.stringify(values) },
      },
    });
    const result = await runMeshctlInProcess(
      ['orch-inject', '-f', join(dir, 'app.yaml'), '-r', 'canary', '-c', join(dir, 'kubeconfig'), '--webhookConfig', 'canary-injector'],
      NO_CLUSTER,
    );
    expect(result.code).toBe(0);
    // --webhookConfig names the configuration in the warning, as the reference's does; the lookup is by revision label.
    expect(result.stderr).toBe(
      'failed to get injection config from mutatingWebhookConfigurations "canary-injector", will fall back to get injection from the injection configmap "mesh-sidecar-injector" : no MutatingWebhookConfiguration labelled mesh.io/rev=canary has a webhook named *sidecar-injector.mesh.io\nConfigMap mesh-system/mesh-canary not found; using the built-in defaults\n',
    );
    const proxy = templateSpec(docs(result.stdout)[0] ?? {}).containers.find((c) => c.name === 'mesh-proxy');
    expect(proxy?.image).toBe('registry.example.com/canary/proxyv2:latest');
  });
});

describe('meshctl orch-inject through the cluster’s live injection webhook', () => {
  test('the webhook of the revision’s MutatingWebhookConfiguration (by URL, verified with its caBundle) injects', async () => {
    const ca = await certificateAuthority(dir, 'live-root');
    const pair = await signedCertificate(dir, 'live-meshd', 'IP:127.0.0.1', ca);
    const identity = { certChainPem: readFileSync(pair.certFile, 'utf8'), keyPem: readFileSync(pair.keyFile, 'utf8') };
    const webhook = newInjectionWebhook({
      settings: {
        injectEnabled: true,
        injectionWebhookConfigName: 'mesh-sidecar-injector',
        legacyFsGroup: true,
        rewriteProbeLegacyLocalhost: false,
        revision: 'live',
      },
      meshConfig: () => DEFAULT_MESH_CONFIG,
      metrics: newMetrics('pilot-discovery'),
      log: newNopLogger(),
    });
    const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: { hub: string } };
    values.global.hub = 'registry.example.com/live';
    webhook.offer({ text: { config: BUILTIN_INJECTOR_CONFIG.config, values: JSON.stringify(values) }, origin: 'test' });
    const server = newAdmissionServer({
      address: { host: '127.0.0.1', port: 0 },
      identity: () => Promise.resolve({ watch: (listener) => (listener(identity), () => undefined) }),
      routes: new Map([['/inject/', webhook.route]]),
      log: newNopLogger(),
    });
    const stop = new AbortController();
    const running = server.start(stop.signal);
    try {
      await server.waitForReady();
      await kube
        .kubeConfig()
        .makeApiClient(AdmissionregistrationV1Api)
        .createMutatingWebhookConfiguration({
          body: {
            metadata: { name: 'mesh-sidecar-injector-live', labels: { 'mesh.io/rev': 'live' } },
            webhooks: [
              {
                name: 'rev.namespace.sidecar-injector.mesh.io',
                admissionReviewVersions: ['v1'],
                sideEffects: 'None',
                clientConfig: {
                  url: `https://127.0.0.1:${server.boundAddress().port}/inject`,
                  caBundle: Buffer.from(readFileSync(ca.certFile)).toString('base64'),
                },
              },
            ],
          },
        });
      const result = await runMeshctlInProcess(['orch-inject', '-f', join(dir, 'app.yaml'), '-r', 'live', '-c', join(dir, 'kubeconfig')], NO_CLUSTER);
      expect(result.stderr).toBe('');
      const out = docs(result.stdout);
      expect(out.map((d) => d['kind'])).toEqual(['Deployment', 'Service', 'CronJob']);
      const proxy = templateSpec(out[0] ?? {}).containers.find((c) => c.name === 'mesh-proxy');
      expect(proxy?.image).toBe('registry.example.com/live/proxyv2:latest');
    } finally {
      stop.abort();
      await running;
      await kube
        .kubeConfig()
        .makeApiClient(AdmissionregistrationV1Api)
        .deleteMutatingWebhookConfiguration({ name: 'mesh-sidecar-injector-live' })
        .catch(() => undefined);
    }
  });
});

describe('meshctl x injector list', () => {
  test('namespaces with their injecting revision and pods by injected revision, then the hooks', async () => {
    const kubeConfig = kube.kubeConfig();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'foo', labels: { 'mesh-injection': 'enabled' } } } });
    await core.createNamespace({ body: { metadata: { name: 'bar', labels: { 'mesh.io/rev': 'stable' } } } });
    await core.createNamespace({ body: { metadata: { name: 'plain' } } });
    const status = (revision: string) =>
      JSON.stringify({ initContainers: ['mesh-init'], containers: ['mesh-proxy'], volumes: [], imagePullSecrets: null, revision });
    const pod = (name: string, annotations: Record<string, string>, labels: Record<string, string> = {}) =>
      core.createNamespacedPod({ namespace: 'foo', body: { metadata: { name, annotations, labels }, spec: { containers: [{ name: 'app', image: 'app' }] } } });
    await pod('injected', { 'sidecar.mesh.io/status': status('default') });
    await pod('old-revision', { 'sidecar.mesh.io/status': status('canary') });
    await pod('plain', {});
    await pod('opted-out', {}, { 'sidecar.mesh.io/inject': 'false' });
    await core.createNamespacedConfigMap({
      namespace: 'mesh-system',
      body: {
        metadata: { name: 'mesh-sidecar-injector', labels: { 'mesh.io/rev': 'default' } },
        data: { config: BUILTIN_INJECTOR_CONFIG.config, values: BUILTIN_INJECTOR_CONFIG.values },
      },
    });
    const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const hook = (name: string, revision: string, selector: Record<string, string>) =>
      admission.createMutatingWebhookConfiguration({
        body: {
          metadata: { name, labels: { 'mesh.io/rev': revision } },
          webhooks: [
            {
              name: 'namespace.sidecar-injector.mesh.io',
              admissionReviewVersions: ['v1'],
              sideEffects: 'None',
              clientConfig: { url: 'https://127.0.0.1:1/inject' },
              namespaceSelector: { matchLabels: selector },
            },
          ],
        },
      });
    await hook('mesh-sidecar-injector', 'default', { 'mesh-injection': 'enabled' });
    await hook('mesh-sidecar-injector-canary', 'canary', { 'mesh.io/rev': 'canary' });
    const result = await runMeshctlInProcess(['x', 'injector', 'list', '-c', join(dir, 'kubeconfig')], NO_CLUSTER);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'NAMESPACE MESH-REVISION  POD-REVISIONS',
        'bar       MISSING/stable <no pods>',
        'foo       default        <non-mesh>: 2 (injection disabled: 1) NEEDS RESTART: 1',
        'foo       default        canary: 1 NEEDS RESTART: 1',
        'foo       default        default: 1',
        '',
        'NAMESPACES          INJECTOR-HOOK                MESH-REVISION SIDECAR-IMAGE',
        'foo                 mesh-sidecar-injector        default       docker.io/meshproject/proxyv2:latest',
        'DOES NOT AUTOINJECT mesh-sidecar-injector-canary canary        registry.example.com/canary/proxyv2:latest',
        '',
      ].join('\n'),
    );
  });
});
