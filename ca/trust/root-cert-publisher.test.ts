import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { newManager, newNopLogger, newRealClock } from '../../runtime/index.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { newCertificateAuthority, type CertificateAuthority } from '../authority/certificate-authority.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { addRootCertPublisher } from './root-cert-publisher.js';
import { newSelfSignedMaterial, rotateSelfSignedMaterial } from '../authority/self-signed-root.js';

const HOUR = 3_600_000;

describe('root certificate publication', () => {
  const clock = newRealClock();
  let kube: ApiServerDouble;
  let core: CoreV1Api;
  let ca: CertificateAuthority;
  const abort = new AbortController();
  let running: Promise<void>;

  beforeAll(async () => {
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    core = kube.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['apps', 'data']) await core.createNamespace({ body: { metadata: { name } } });
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 100 * HOUR,
      nowMs: clock.now(),
    });
    ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: HOUR, maxTtlMs: HOUR });
    const manager = newManager({ log: newNopLogger('ca'), clock, shutdownDurationMs: 5000 });
    addRootCertPublisher({ manager, kubeConfig: kube.kubeConfig(), ca, log: newNopLogger('ca') });
    running = manager.start(abort.signal);
  });

  afterAll(async () => {
    abort.abort();
    await running?.catch(() => undefined);
    await kube?.close();
  });

  const published = (namespace: string): string | undefined =>
    (kube.objects('v1', 'ConfigMap', namespace).find((c) => c.metadata?.name === 'mesh-ca-root-cert')?.['data'] as Record<string, string> | undefined)?.[
      'root-cert.pem'
    ];

  test('every namespace gets the trust bundle, new ones too', async () => {
    await waitFor(() => published('apps') === ca.rootBundlePem() && published('data') === ca.rootBundlePem(), { description: 'config maps in apps and data' });
    await core.createNamespace({ body: { metadata: { name: 'late' } } });
    await waitFor(() => published('late') === ca.rootBundlePem(), { description: 'config map in a new namespace' });
  });

  test('an edited or deleted config map is restored', async () => {
    await waitFor(() => published('apps') === ca.rootBundlePem());
    const edited = await core.patchNamespacedConfigMap({
      name: 'mesh-ca-root-cert',
      namespace: 'apps',
      body: [{ op: 'replace', path: '/data/root-cert.pem', value: 'tampered' }],
    });
    expect(edited.data?.['root-cert.pem']).toBe('tampered');
    await waitFor(() => published('apps') === ca.rootBundlePem(), { description: 'the edit reverted' });
    await core.deleteNamespacedConfigMap({ name: 'mesh-ca-root-cert', namespace: 'apps' });
    await waitFor(() => published('apps') === ca.rootBundlePem(), { description: 'the config map recreated' });
  });

  test('a root rotation is published everywhere', async () => {
    const before = ca.rootBundlePem();
    ca.setBundle(loadKeyCertBundle(rotateSelfSignedMaterial(ca.bundle().material, { trustDomain: 'cluster.local', ttlMs: 100 * HOUR, nowMs: clock.now() })));
    expect(ca.rootBundlePem()).not.toBe(before);
    await waitFor(() => ['apps', 'data', 'late'].every((ns) => published(ns) === ca.rootBundlePem()), { description: 'the rotated bundle everywhere' });
  });
});
