import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { CaError } from '../ca-error.js';
import { newKubeSecretCaStore } from './kube-secret-ca-store.js';
import { newMeshCa } from '../authority/new-mesh-ca.js';
import { newSelfSignedMaterial } from '../authority/self-signed-root.js';
import { daemonSettings, removeDir, tempDir } from '../testing/test-support.js';
import { meshCaSettingsFromSettings } from '../ca-settings.js';

describe('self-signed CA in the mesh-ca-secret secret', () => {
  let server: ApiServerDouble;
  let dir: string;

  beforeAll(async () => {
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    for (const name of ['mesh-system', 'other']) await core.createNamespace({ body: { metadata: { name } } });
    dir = await tempDir();
  });

  afterAll(async () => {
    await server.close();
    await removeDir(dir);
  });

  test('the first daemon creates the secret; a restart and a second replica use the same root', async () => {
    const clock = new FakeClock(Date.now());
    const start = () =>
      newMeshCa({
        caSettings: meshCaSettingsFromSettings(daemonSettings({ ROOT_CA_DIR: join(dir, 'none') })),
        log: newNopLogger('pkica'),
        clock,
        selfSignedStore: newKubeSecretCaStore({ kubeConfig: server.kubeConfig(), namespace: 'mesh-system' }),
        selfSignedKeyType: 'ecdsa-p256',
      });
    const first = (await start())!;
    const [secret] = server.objects('v1', 'Secret', 'mesh-system');
    expect(secret?.metadata?.name).toBe('mesh-ca-secret');
    const stored = secret as unknown as { type: string; data: Record<string, string> };
    expect(stored.type).toBe('mesh.io/ca-root');
    expect(Object.keys(stored.data).sort()).toEqual(['ca-cert.pem', 'ca-key.pem', 'cert-chain.pem', 'root-cert.pem']);
    expect(Buffer.from(stored.data['root-cert.pem']!, 'base64').toString()).toBe(first.authority.rootBundlePem());
    const second = (await start())!;
    expect(second.authority.rootBundlePem()).toBe(first.authority.rootBundlePem());
  });

  test('writes with a stale version or a second create are conflicts', async () => {
    const store = newKubeSecretCaStore({ kubeConfig: server.kubeConfig(), namespace: 'other', name: 'ca-under-test' });
    expect(await store.load()).toBeUndefined();
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 3_600_000,
      nowMs: Date.now(),
    });
    const created = await store.save(material, undefined);
    await expect(store.save(material, undefined)).rejects.toMatchObject({ code: 'ca-store-conflict' });
    const updated = await store.save({ ...material, rootCertPem: material.rootCertPem + material.rootCertPem }, created.version);
    expect(updated.version).not.toBe(created.version);
    const error = await store.save(material, created.version).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CaError);
    expect((error as CaError).code).toBe('ca-store-conflict');
    expect((await store.load())?.material.rootCertPem).toBe(material.rootCertPem + material.rootCertPem);
  });
});
