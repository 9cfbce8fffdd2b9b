import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, CertificatesV1Api, CoordinationV1Api, CoreV1Api, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { buildCsr, csrRequestedNames, newMeshCertificateClient } from '../../ca/index.js';
import { newTestAuthority, type TestAuthority } from '../../ca/testing/test-authority.js';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { collect, startBin } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';

// The built daemon in Kubernetes mode against the API server double: config from informers, a
// leader Lease, workload certificates signed by an external signer through the
// CertificateSigningRequest API (EXTERNAL_CA=MESHD_RA_ORCH_API), and the signer's root
// published in every namespace.
const SIGNER = 'example.com/mesh-signer';

describe('pilot-discovery discovery with an orchestrator and an external signer', () => {
  let kube: ApiServerDouble;
  let signerCa: TestAuthority;
  let daemon: ChildProcess;
  let exited: Promise<unknown>;
  let workDir: string;
  let securePort: number;
  let httpPort: number;
  let signerLoop: ReturnType<typeof setInterval>;

  beforeAll(async () => {
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const kubeConfig = kube.kubeConfig();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['mesh-system', 'foo']) await core.createNamespace({ body: { metadata: { name } } });
    const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
    await core.createNamespacedService({
      namespace: 'foo',
      body: { metadata: { name: 'httpbin' }, spec: { selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000, targetPort: 80 as never }] } },
    });

    // A signer acting on approved requests for SIGNER, as a real one would.
    signerCa = await newTestAuthority('cluster.local');
    const certificates = kubeConfig.makeApiClient(CertificatesV1Api);
    const signing = new Set<string>();
    signerLoop = setInterval(() => {
      void certificates.listCertificateSigningRequest().then(
        async (list) => {
          for (const csr of list.items as V1CertificateSigningRequest[]) {
            const name = csr.metadata?.name ?? '';
            const approved = csr.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True');
            if (csr.spec.signerName !== SIGNER || !approved || csr.status?.certificate || signing.has(name)) continue;
            signing.add(name);
            const pem = Buffer.from(csr.spec.request, 'base64').toString('utf8');
            const identity = csrRequestedNames(pem).find((n) => n.type === 'uri')?.value ?? '';
            const issued = signerCa.ca.signCsr(pem, identity, 3_600_000);
            await certificates.replaceCertificateSigningRequestStatus({
              name,
              body: { ...csr, status: { ...csr.status, certificate: Buffer.from(issued.certPem).toString('base64') } },
            });
          }
        },
        () => undefined,
      );
    }, 50);

    workDir = mkdtempSync(join(tmpdir(), 'daemon-kube-'));
    await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
    mkdirSync(join(workDir, 'etc/external-ca-cert'), { recursive: true });
    writeFileSync(join(workDir, 'etc/external-ca-cert/root-cert.pem'), signerCa.rootPem);
    const serving = signerCa.loopbackServer();
    writeFileSync(join(workDir, 'tls.crt'), serving.certPem);
    writeFileSync(join(workDir, 'tls.key'), serving.keyPem);
    securePort = await freePort();
    httpPort = await freePort();
    daemon = startBin(
      'pilot-discovery',
      [
        'discovery',
        '--orchconfig',
        join(workDir, 'kubeconfig'),
        '--httpAddr',
        `127.0.0.1:${httpPort}`,
        '--monitoringAddr',
        '127.0.0.1:0',
        '--httpsAddr',
        '127.0.0.1:0',
        '--secureGRPCAddr',
        `127.0.0.1:${securePort}`,
        '--grpcAddr',
        '127.0.0.1:0',
        '--ctrlz_port',
        '0',
        '--tlsCertFile',
        join(workDir, 'tls.crt'),
        '--tlsKeyFile',
        join(workDir, 'tls.key'),
        '--shutdownDuration',
        '5s',
      ],
      { EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: SIGNER, POD_NAME: 'meshd-test' },
      workDir,
    );
    exited = collect(daemon, 60_000);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${httpPort}/ready`)).status === 200, {
      timeoutMs: 20_000,
      description: 'the daemon to be ready',
    });
  });

  afterAll(async () => {
    clearInterval(signerLoop);
    if (daemon?.exitCode === null) daemon.kill('SIGTERM');
    await exited?.catch(() => undefined);
    await kube?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  test('the model is filled from informers', async () => {
    const registry = (await (await fetch(`http://127.0.0.1:${httpPort}/debug/registryz`)).json()) as Array<{ hostname: string }>;
    expect(registry.map((s) => s.hostname)).toEqual(['httpbin.foo.svc.cluster.local']);
  });

  test('the daemon holds the leader Lease and publishes the signer root in every namespace', async () => {
    const coordination = kube.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await waitFor(
      async () => {
        const found = await coordination.readNamespacedLease({ namespace: 'mesh-system', name: 'meshd-leader' }).catch(() => undefined);
        return found?.spec?.holderIdentity ? found : undefined;
      },
      { timeoutMs: 10_000, description: 'the leader Lease' },
    );
    expect(lease.spec?.holderIdentity).toMatch(/^meshd-test_/);
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    const configMap = await waitFor(() => core.readNamespacedConfigMap({ namespace: 'foo', name: 'mesh-ca-root-cert' }).catch(() => undefined), {
      timeoutMs: 10_000,
      description: 'the root ConfigMap in foo',
    });
    expect(configMap.data?.['root-cert.pem']).toBe(signerCa.rootPem);
  });

  test('without --configDir and --orchconfig, the daemon finds its cluster through KUBECONFIG', async () => {
    const port = await freePort();
    const second = startBin(
      'pilot-discovery',
      [
        'discovery',
        '--httpAddr',
        `127.0.0.1:${port}`,
        '--monitoringAddr',
        '127.0.0.1:0',
        '--httpsAddr',
        '127.0.0.1:0',
        '--secureGRPCAddr',
        '127.0.0.1:0',
        '--grpcAddr',
        '127.0.0.1:0',
        '--ctrlz_port',
        '0',
      ],
      { KUBECONFIG: join(workDir, 'kubeconfig'), ENABLE_CA_SERVER: 'false', POD_NAME: 'meshd-second' },
      workDir,
    );
    const done = collect(second, 30_000);
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200, { timeoutMs: 15_000, description: 'the second daemon' });
      const registry = (await (await fetch(`http://127.0.0.1:${port}/debug/registryz`)).json()) as Array<{ hostname: string }>;
      expect(registry.map((s) => s.hostname)).toEqual(['httpbin.foo.svc.cluster.local']);
    } finally {
      second.kill('SIGTERM');
      await done;
    }
  });

  test('a service-account token gets a certificate from the external signer', async () => {
    const client = newMeshCertificateClient(`127.0.0.1:${securePort}`, credentials.createSsl(Buffer.from(signerCa.rootPem)), {
      'grpc.ssl_target_name_override': 'localhost',
    });
    try {
      const identity = 'spiffe://cluster.local/ns/foo/sa/httpbin';
      const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${kube.issueToken({ namespace: 'foo', serviceAccount: 'httpbin', audiences: ['mesh-ca'] })}`);
      const chain = await client.createCertificate({ csr: buildCsr({ key, sans: { uris: [identity] } }), validity_duration: 3600 }, metadata, {
        deadline: new Date(Date.now() + 15_000),
      });
      const leaf = new X509Certificate(chain[0] as string);
      expect(leaf.subjectAltName).toBe(`URI:${identity}`);
      expect(leaf.verify(new X509Certificate(signerCa.rootPem).publicKey)).toBe(true);
      expect(kube.objects('certificates.k8s.io/v1', 'CertificateSigningRequest')).toHaveLength(0);
    } finally {
      client.close();
    }
  });
});
