import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiRequestRecord, type ApiServerDouble } from '../apiserver-double/index.js';
import { buildCsr, newMeshCertificateClient } from '../ca/index.js';
import { loggingTo, meshdTestOptions, startMeshdInProcess, type InProcessMeshd } from './testing/in-process-meshd.js';
import { loadSettings } from '../runtime/index.js';
import { helm } from '../testing/helm.js';
import { freePort, waitFor } from '../testing/wait-for.js';
import { CLUSTER_TYPE, HEALTH_INFORMATION_TYPE, loadEnvoyProtos } from '../xds/index.js';
import { newAdsTestClient, nodeFor } from '../xds/testing/test-support.js';
import { allows, BASE_CHART, clusterRoleRules, renderBase, type PolicyRule } from '../e2e/charts/testing/base-chart.js';

// RBAC against reality (here because only cli/ may import the command trees): the base chart installed with the real helm into the API server double,
// then the daemon run in process in Kubernetes mode as service account mesh-system/meshd, driven
// through its informers, leader election, CA (secret, TokenReview, root publication), webhook
// patcher (caBundle, the dry-run readiness probe, fail-closed) and status writer. Every request it
// makes must be allowed by the chart's ClusterRole; the rules it never used are reported.
const DAEMON_USER = 'system:serviceaccount:mesh-system:meshd';

let kube: ApiServerDouble;
let workDir: string;
let rules: PolicyRule[];
let securePort: number;
let grpcPort: number;
let daemon: InProcessMeshd | undefined;
const requests: ApiRequestRecord[] = [];

const injector = {
  metadata: { name: 'mesh-sidecar-injector', labels: { 'mesh.io/rev': 'default', app: 'sidecar-injector' } },
  webhooks: [
    {
      name: 'namespace.sidecar-injector.mesh.io',
      clientConfig: { service: { name: 'meshd', namespace: 'mesh-system', path: '/inject', port: 443 }, caBundle: '' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      namespaceSelector: { matchLabels: { 'mesh-injection': 'enabled' } },
    },
  ],
};

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'base-rbac-'));
  const httpsPort = await freePort();
  const httpPort = await freePort();
  securePort = await freePort();
  grpcPort = await freePort();
  kube = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    onRequest: (record) => requests.push(record),
    serviceResolver: (namespace, name, port) =>
      namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: httpsPort } : undefined,
  });
  const adminKubeconfig = join(workDir, 'admin-kubeconfig');
  await kube.writeKubeconfig(adminKubeconfig);
  const installed = await helm(['install', 'base', BASE_CHART, '--namespace', 'mesh-system', '--create-namespace', '--set', 'defaultRevision=default'], {
    workDir,
    kubeconfig: adminKubeconfig,
    timeoutMs: 120_000,
  });
  if (installed.code !== 0) throw new Error(`helm install failed: ${installed.stderr}`);
  rules = clusterRoleRules(await renderBase(workDir));

  const admin = kube.kubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'foo', labels: { 'mesh-injection': 'enabled' } } } });
  await core.createNamespacedServiceAccount({ namespace: 'mesh-system', body: { metadata: { name: 'meshd' } } });
  await core.createNamespacedServiceAccount({ namespace: 'foo', body: { metadata: { name: 'httpbin' } } });
  await admin.makeApiClient(AdmissionregistrationV1Api).createMutatingWebhookConfiguration({ body: injector as never });

  const daemonKubeconfig = join(workDir, 'meshd-kubeconfig');
  await kube.writeKubeconfig(daemonKubeconfig, kube.issueToken({ namespace: 'mesh-system', serviceAccount: 'meshd', expirationSeconds: 86_400 }));
  const settings = loadSettings('pilot-discovery', {
    POD_NAME: 'meshd-rbac',
    ECC_SIGNATURE_ALGORITHM: 'ECDSA',
    PILOT_ENABLE_STATUS: 'true',
    PILOT_USE_ENDPOINT_SLICE: 'true',
    XDS_AUTH_PLAINTEXT: 'true',
    PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: '100ms',
  });
  daemon = startMeshdInProcess(
    meshdTestOptions(settings, {
      kubeConfigPath: daemonKubeconfig,
      secureGrpcAddr: `127.0.0.1:${securePort}`,
      grpcAddr: `127.0.0.1:${grpcPort}`,
      httpAddr: `127.0.0.1:${httpPort}`,
      httpsAddr: `127.0.0.1:${httpsPort}`,
      logging: loggingTo(join(workDir, 'meshd.log')),
    }),
  );
  await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 30_000,
    description: 'the daemon ready',
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

const used = (): ApiRequestRecord[] => requests.filter((request) => request.username === DAEMON_USER);
const describeRequest = (r: ApiRequestRecord): string =>
  `${r.verb} ${r.apiGroup || 'core'}/${r.resource}${r.namespace ? ` in ${r.namespace}` : ''}${r.name ? ` (${r.name})` : ''}`;

describe('the base chart’s ClusterRole against what the daemon asks', () => {
  test('the daemon, driven through every part that talks to the API server, makes no request the ClusterRole denies', async () => {
    const admin = kube.kubeConfig();
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: 'foo',
      body: { metadata: { name: 'httpbin' }, spec: { selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000 }] } },
    });
    await core.createNamespacedPod({
      namespace: 'foo',
      body: {
        metadata: { name: 'httpbin-1', labels: { app: 'httpbin', 'sidecar.mesh.io/inject': 'false' } },
        spec: { serviceAccountName: 'httpbin', containers: [{ name: 'app', image: 'httpbin' }] },
      },
    });
    await admin.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace: 'foo',
      body: {
        metadata: { name: 'httpbin-abc', labels: { 'kubernetes.io/service-name': 'httpbin' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'] }],
        ports: [{ name: 'http', port: 80 }],
      },
    });
    const custom = admin.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'security.mesh.io',
      version: 'v1beta1',
      namespace: 'foo',
      plural: 'peerauthentications',
      body: { apiVersion: 'security.mesh.io/v1beta1', kind: 'PeerAuthentication', metadata: { name: 'strict' }, spec: { mtls: { mode: 'STRICT' } } },
    });

    // Leader election, the CA secret, root publication, the webhook patcher (caBundle, the
    // dry-run Gateway, fail-closed) and the status writer.
    await waitFor(() => kube.objects('coordination.k8s.io/v1', 'Lease', 'mesh-system').length > 0, { timeoutMs: 30_000, description: 'a leader Lease' });
    await waitFor(() => kube.objects('v1', 'Secret', 'mesh-system').some((s) => s.metadata?.name === 'mesh-ca-secret'), {
      timeoutMs: 30_000,
      description: 'mesh-ca-secret',
    });
    const rootOf = (namespace: string) =>
      kube.objects('v1', 'ConfigMap', namespace).find((c) => c.metadata?.name === 'mesh-ca-root-cert') as { data?: Record<string, string> } | undefined;
    await waitFor(() => rootOf('foo'), { timeoutMs: 30_000, description: 'the root published in foo' });
    const validator = () =>
      kube.objects('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration').find((v) => v.metadata?.name === 'meshd-default-validator') as
        { webhooks?: { failurePolicy?: string }[] } | undefined;
    await waitFor(() => validator()?.webhooks?.every((webhook) => webhook.failurePolicy === 'Fail'), {
      timeoutMs: 30_000,
      description: 'validation fail-closed',
    });
    const status = () => kube.objects('security.mesh.io/v1beta1', 'PeerAuthentication', 'foo')[0] as { status?: unknown } | undefined;
    await waitFor(() => status()?.status, { timeoutMs: 30_000, description: 'the policy’s status written' });

    // A workload certificate: the CA reviews the workload's token.
    const client = newMeshCertificateClient(`127.0.0.1:${securePort}`, credentials.createSsl(Buffer.from(rootOf('foo')?.data?.['root-cert.pem'] ?? '')), {
      'grpc.ssl_target_name_override': 'meshd.mesh-system.svc',
    });
    try {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${kube.issueToken({ namespace: 'foo', serviceAccount: 'httpbin', audiences: ['mesh-ca'] })}`);
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const chain = await client.createCertificate(
        { csr: buildCsr({ key, sans: { uris: ['spiffe://cluster.local/ns/foo/sa/httpbin'] } }), validity_duration: 3600 },
        metadata,
        { deadline: new Date(Date.now() + 15_000) },
      );
      expect(chain.length).toBeGreaterThan(0);
    } finally {
      client.close();
    }

    // WorkloadEntry auto-registration: a VM proxy of foo/httpbin registers, reports health, leaves.
    await custom.createNamespacedCustomObject({
      group: 'networking.mesh.io',
      version: 'v1',
      namespace: 'foo',
      plural: 'workloadgroups',
      body: { apiVersion: 'networking.mesh.io/v1', kind: 'WorkloadGroup', metadata: { name: 'vm' }, spec: { template: { serviceAccount: 'httpbin' } } },
    });
    const ads = newAdsTestClient(loadEnvoyProtos(), grpcPort);
    try {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${kube.issueToken({ namespace: 'foo', serviceAccount: 'httpbin', audiences: ['mesh-ca'] })}`);
      const stream = ads.sotw(metadata);
      const node = nodeFor('vm-1', 'foo', {
        SERVICE_ACCOUNT: 'httpbin',
        AUTO_REGISTER_GROUP: 'vm',
        PROXY_CONFIG: { readinessProbe: { tcpSocket: { port: 80 } } },
      });
      stream.send({ node, type_url: CLUSTER_TYPE, resource_names: [] });
      await stream.next(10_000);
      type Entry = { status?: { conditions?: { type: string }[] } };
      const vmEntry = () => kube.objects('networking.mesh.io/v1alpha3', 'WorkloadEntry', 'foo')[0] as Entry | undefined;
      stream.send({ type_url: HEALTH_INFORMATION_TYPE });
      await waitFor(() => vmEntry()?.status?.conditions?.some((condition) => condition.type === 'Healthy'), {
        timeoutMs: 30_000,
        description: 'Healthy written',
      });
      stream.cancel();
      await waitFor(() => vmEntry() === undefined, { timeoutMs: 30_000, description: 'the WorkloadEntry cleaned up' });
    } finally {
      ads.close();
    }

    const kinds = new Set(used().map((r) => `${r.verb} ${r.apiGroup}/${r.resource}`));
    expect([...kinds]).toEqual(
      expect.arrayContaining([
        'create /secrets',
        'create coordination.k8s.io/leases',
        'create authentication.k8s.io/tokenreviews',
        'update admissionregistration.k8s.io/validatingwebhookconfigurations',
        'create networking.mesh.io/gateways',
        'patch security.mesh.io/peerauthentications/status',
        'watch discovery.k8s.io/endpointslices',
        'get networking.mesh.io/workloadgroups',
        'create networking.mesh.io/workloadentries',
        'update networking.mesh.io/workloadentries',
        'update networking.mesh.io/workloadentries/status',
        'delete networking.mesh.io/workloadentries',
      ]),
    );
    const denied = [
      ...new Map(
        used()
          .filter((r) => !allows(rules, r.verb, r.apiGroup, r.resource))
          .map((r) => [`${r.verb} ${r.apiGroup}/${r.resource}`, describeRequest(r)]),
      ).values(),
    ];
    expect(denied).toEqual([]);
  }, 120_000);

  test('every rule is reported with what used it; rules nothing used are listed', () => {
    const unused: string[] = [];
    const report = rules.flatMap((rule) =>
      (rule.apiGroups ?? []).flatMap((group) =>
        (rule.resources ?? []).flatMap((resource) =>
          rule.verbs.map((verb) => {
            const hits = used().filter((r) => allows([{ apiGroups: [group], resources: [resource], verbs: [verb] }], r.verb, r.apiGroup, r.resource)).length;
            const line = `${verb} ${group || 'core'}/${resource}: ${hits} request(s)`;
            if (hits === 0) unused.push(`${verb} ${group || 'core'}/${resource}`);
            return line;
          }),
        ),
      ),
    );
    console.info(`ClusterRole use by the daemon:\n  ${report.join('\n  ')}\nnever used here:\n  ${unused.join('\n  ')}`);
    // What this run cannot reach, each granted for code that calls it: the CSR API
    // (EXTERNAL_CA=MESHD_RA_ORCH_API, driven by cli/pilot-discovery/daemon-kubernetes.test.ts), replacing a root
    // ConfigMap that differs, rotating the CA secret and renewing the Lease (after the retry period).
    // The Lease is renewed once the retry period passes, which a slow (loaded) run reaches: either way is right.
    expect(unused.filter((rule) => rule !== 'update coordination.k8s.io/leases').sort()).toEqual(
      [
        'approve certificates.k8s.io/signers',
        'create certificates.k8s.io/certificatesigningrequests',
        'delete certificates.k8s.io/certificatesigningrequests',
        'get certificates.k8s.io/certificatesigningrequests',
        'update certificates.k8s.io/certificatesigningrequests/approval',
        'update core/configmaps',
        'update core/secrets',
      ].sort(),
    );
  });
});
