import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AdmissionregistrationV1Api, ApiextensionsV1Api, CoreV1Api, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { loadSettings } from '../runtime/index.js';
import { buildCrdManifests } from '../crds/crd-manifests.js';
import { kubectl as runKubectl } from '../testing/kubectl.js';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { toolPath } from '../testing/tools.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess, type InProcessMeshd } from './testing/in-process-meshd.js';

// The daemon's admission webhooks in Kubernetes mode, run in process against the API server
// double's admission chain and driven with the real kubectl: the daemon patches caBundle into its
// webhook configurations, switches validation to fail-closed once an invalid Gateway is denied,
// and kubectl shows the daemon's denials and warnings.

let kube: ApiServerDouble;
let workDir: string;
let httpsPort: number;
let httpPort: number;
let daemon: InProcessMeshd | undefined;

const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(workDir, 'kubeconfig'), home: workDir }, args);
let manifests = 0;
const apply = (yaml: string): Promise<{ stdout: string; stderr: string; code: number }> => {
  const file = join(workDir, `manifest-${++manifests}.yaml`);
  writeFileSync(file, yaml);
  return kubectl('apply', '-f', file);
};

const service = (path: string) => ({ service: { name: 'meshd', namespace: 'mesh-system', path, port: 443 }, caBundle: '' });
const validatingConfiguration = {
  metadata: { name: 'mesh-validator-mesh-system', labels: { 'mesh.io/rev': 'default', app: 'meshd' } },
  webhooks: [
    {
      name: 'validation.mesh.io',
      clientConfig: service('/validate'),
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['security.mesh.io', 'networking.mesh.io'], apiVersions: ['*'], resources: ['*'] }],
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      admissionReviewVersions: ['v1beta1', 'v1'],
      objectSelector: { matchExpressions: [{ key: 'mesh.io/rev', operator: 'DoesNotExist' }] },
    },
    {
      name: 'rev.validation.mesh.io',
      clientConfig: service('/validate'),
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['security.mesh.io', 'networking.mesh.io'], apiVersions: ['*'], resources: ['*'] }],
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      admissionReviewVersions: ['v1beta1', 'v1'],
      objectSelector: { matchExpressions: [{ key: 'mesh.io/rev', operator: 'In', values: ['default'] }] },
    },
  ],
};
const mutatingConfiguration = {
  metadata: { name: 'mesh-sidecar-injector', labels: { 'mesh.io/rev': 'default', app: 'sidecar-injector' } },
  webhooks: [
    {
      name: 'namespace.sidecar-injector.mesh.io',
      clientConfig: service('/inject'),
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1beta1', 'v1'],
      namespaceSelector: { matchLabels: { 'mesh-injection': 'enabled' } },
    },
    {
      name: 'someone-else.example.io',
      clientConfig: { url: 'https://127.0.0.1:1/x', caBundle: '' },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      rules: [],
    },
  ],
};

async function startDaemon(): Promise<void> {
  const settings = loadSettings('pilot-discovery', { POD_NAME: 'meshd-webhooks', ECC_SIGNATURE_ALGORITHM: 'ECDSA' });
  daemon = startMeshdInProcess(
    meshdTestOptions(settings, {
      kubeConfigPath: join(workDir, 'kubeconfig'),
      httpAddr: `127.0.0.1:${httpPort}`,
      httpsAddr: `127.0.0.1:${httpsPort}`,
      logging: loggingTo(join(workDir, 'meshd.log')),
    }),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    description: 'the daemon ready',
  });
}

beforeAll(async () => {
  await toolPath('kubectl');
  [httpsPort, httpPort] = await Promise.all([freePort(), freePort()]);
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    serviceResolver: (namespace, name, port) =>
      namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: httpsPort } : undefined,
  });
  const kubeConfig = kube.kubeConfig();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name } } });
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
  const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  await admission.createValidatingWebhookConfiguration({ body: validatingConfiguration as never });
  await admission.createMutatingWebhookConfiguration({ body: mutatingConfiguration as never });
  workDir = mkdtempSync(join(tmpdir(), 'daemon-webhooks-'));
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
  await startDaemon();
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

const readValidating = async (): Promise<V1ValidatingWebhookConfiguration> =>
  kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api).readValidatingWebhookConfiguration({ name: 'mesh-validator-mesh-system' });

describe('the daemon keeps its webhook configurations right', () => {
  test('caBundle is patched into the validation webhook and the injection webhooks (only those), and validation switches to fail-closed', async () => {
    await waitFor(async () => (await readValidating()).webhooks?.[0]?.failurePolicy === 'Fail', {
      timeoutMs: 30_000,
      description: 'validation switched to Fail',
    });
    const validating = await readValidating();
    const bundle = Buffer.from(validating.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString();
    expect(bundle).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const mutating = await kube.kubeConfig().makeApiClient(AdmissionregistrationV1Api).readMutatingWebhookConfiguration({ name: 'mesh-sidecar-injector' });
    expect(mutating.webhooks?.[0]?.clientConfig.caBundle).toBe(validating.webhooks?.[0]?.clientConfig.caBundle);
    expect(mutating.webhooks?.[1]?.clientConfig.caBundle ?? '').toBe('');
  });
});

describe('kubectl against the daemon’s validation webhook', () => {
  test('an invalid AuthorizationPolicy is refused with the daemon’s message naming the field', async () => {
    const result = await apply(
      'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: bad\n  namespace: foo\nspec:\n  action: ALLOW\n  rules:\n  - to:\n    - operation:\n        methods: [""]\n',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'admission webhook "validation.mesh.io" denied the request: configuration is invalid: spec.rules[0].to[0].operation.methods[0]: ',
    );
    expect((await kubectl('get', 'authorizationpolicies', '-n', 'foo', '-o', 'name')).stdout).not.toContain('bad');
  });

  test('a DENY rule with HTTP-only fields is accepted with a warning kubectl prints', async () => {
    const result = await apply(
      'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: deny-get\n  namespace: foo\nspec:\n  action: DENY\n  rules:\n  - to:\n    - operation:\n        methods: ["GET"]\n',
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^Warning: spec\.rules\[0\].*DENY rule uses HTTP-only fields/m);
    expect(result.stdout).toContain('authorizationpolicy.security.mesh.io/deny-get created');
  });
});

const POD = (name: string, extra = ''): string =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: foo\n  labels:\n    app: httpbin\n${extra}spec:\n  containers:\n  - name: httpbin\n    image: kennethreitz/httpbin\n    ports:\n    - containerPort: 80\n    readinessProbe:\n      httpGet:\n        path: /status/200\n        port: 80\n`;

describe('kubectl against the daemon’s injection webhook', () => {
  test('a pod applied in a namespace labelled mesh-injection=enabled is stored with its sidecar', async () => {
    expect((await kubectl('label', 'namespace', 'foo', 'mesh-injection=enabled')).code).toBe(0);
    const applied = await apply(POD('httpbin-1'));
    expect(applied.stderr).toBe('');
    const pod = JSON.parse((await kubectl('get', 'pod', 'httpbin-1', '-n', 'foo', '-o', 'json')).stdout) as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        containers: { name: string; args?: string[]; readinessProbe?: { httpGet: { port: number; path: string } } }[];
        initContainers?: { name: string; args?: string[] }[];
        volumes: { name: string }[];
      };
    };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['httpbin', 'mesh-proxy']);
    expect(pod.spec.initContainers?.map((c) => c.name)).toEqual(['mesh-init']);
    expect(pod.spec.initContainers?.[0]?.args?.slice(0, 2)).toEqual(['mesh-iptables', '-p']);
    expect(pod.metadata.labels['security.mesh.io/tlsMode']).toBe('mesh');
    expect(pod.metadata.labels['service.mesh.io/canonical-name']).toBe('httpbin');
    expect(JSON.parse(pod.metadata.annotations['sidecar.mesh.io/status'] ?? '{}')).toMatchObject({
      containers: ['mesh-proxy'],
      initContainers: ['mesh-init'],
      revision: 'default',
    });
    // The app's probe now goes through the agent's status port (15021 here: the mesh config's statusPort).
    expect(pod.spec.containers[0]?.readinessProbe?.httpGet).toEqual({ path: '/app-health/httpbin/readyz', port: 15021 });
  });

  test('a pod that opts out is stored as applied; an invalid annotation is refused with the webhook’s message', async () => {
    await apply(POD('opted-out', '  annotations:\n    sidecar.mesh.io/inject: "false"\n'));
    const pod = JSON.parse((await kubectl('get', 'pod', 'opted-out', '-n', 'foo', '-o', 'json')).stdout) as { spec: { containers: { name: string }[] } };
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['httpbin']);
    const refused = await apply(
      POD('bad-annotation', '  annotations:\n    sidecar.mesh.io/interceptionMode: BOGUS\n    status.sidecar.mesh.io/port: "70000"\n'),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('admission webhook "namespace.sidecar-injector.mesh.io" denied the request: ');
    expect(refused.stderr).toContain("invalid value 'BOGUS' for annotation 'sidecar.mesh.io/interceptionMode'");
    expect(refused.stderr).toContain("invalid value '70000' for annotation 'status.sidecar.mesh.io/port'");
  });

  test('/debug/inject shows the active templates', async () => {
    const active = (await (await fetch(`http://127.0.0.1:${httpPort}/debug/inject`)).json()) as { origin: string; templates: string[] };
    expect(active.origin).toBe('built-in defaults');
    expect(active.templates).toEqual(expect.arrayContaining(['gateway', 'grpc-agent', 'sidecar']));
  });
});

describe('the daemon down', () => {
  test('with the daemon down, the fail-closed policy refuses what it cannot check', async () => {
    await daemon?.stop();
    const result = await apply('apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata:\n  name: unchecked\n  namespace: foo\nspec: {}\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('failed calling webhook "validation.mesh.io"');
  });
});
