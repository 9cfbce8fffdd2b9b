import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { SettingsError, UsageError, newNopLogger } from '../../runtime/index.js';
import { newFolderCaStore } from '../store/folder-ca-store.js';
import { newMeshSigner, type MeshSignerOptions } from './new-mesh-signer.js';
import { daemonSettings, removeDir, tempDir } from '../testing/test-support.js';
import { externalSigningFromSettings, meshCaSettingsFromSettings } from '../ca-settings.js';
import { newTestAuthority, type TestAuthority } from '../testing/test-authority.js';

describe('choosing who signs workload certificates', () => {
  let dir: string;
  let signer: TestAuthority;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });

  beforeAll(async () => {
    dir = await tempDir();
    signer = await newTestAuthority('cluster.local');
    await writeFile(join(dir, 'signer-root.pem'), signer.rootPem);
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  const options = (env: Record<string, string>, extra: Partial<MeshSignerOptions> = {}): MeshSignerOptions => {
    const settings = daemonSettings({ ROOT_CA_DIR: join(dir, 'no-cacerts'), ...env });
    const externalSigning = externalSigningFromSettings(settings);
    return {
      caSettings: meshCaSettingsFromSettings(settings),
      ...(externalSigning ? { externalSigning } : {}),
      log: newNopLogger('pkica'),
      selfSignedStore: newFolderCaStore(join(dir, 'self-signed')),
      selfSignedKeyType: 'ecdsa-p256',
      ...extra,
    };
  };
  // The settings are refused while the options are mapped: a rejection, as from the start-up step.
  const signerFor = async (env: Record<string, string>, extra: Partial<MeshSignerOptions> = {}) => newMeshSigner(options(env, extra));
  const errorOf = async (promise: Promise<unknown>): Promise<Error> => {
    try {
      await promise;
    } catch (err) {
      if (err instanceof Error) return err;
      throw new Error(`expected an Error, got ${String(err)}`, { cause: err });
    }
    throw new Error('expected a rejection');
  };

  test('no EXTERNAL_CA: our own CA signs, and its roots are ours', async () => {
    const chosen = await newMeshSigner(options({}));
    expect(chosen?.kind).toBe('ca');
    if (chosen?.kind !== 'ca') return;
    expect(chosen.ca.mode).toBe('self-signed');
    expect(chosen.signer).toBe(chosen.ca.authority);
    expect(chosen.localRoots.rootBundlePem()).toBe(chosen.ca.authority.rootBundlePem());
    expect(chosen.trustDomain).toBe('cluster.local');
  });

  test('MESHD_RA_ORCH_API: a registration authority for ORCH_SIGNER, trusting the mounted signer root', async () => {
    const chosen = await newMeshSigner(
      options({ EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'example.com/mesh-signer' }, { kubeConfig, signerRootFile: join(dir, 'signer-root.pem') }),
    );
    expect(chosen?.kind).toBe('ra');
    if (chosen?.kind !== 'ra') return;
    expect(chosen.ra.signerName).toBe('example.com/mesh-signer');
    expect(chosen.signer).toBe(chosen.ra);
    expect(chosen.localRoots.rootBundlePem()).toBe(signer.rootPem);
    const direct = await newMeshSigner(
      options({ EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'example.com/mesh-signer' }, { kubeConfig, signerRootPem: signer.rootPem }),
    );
    expect(direct?.localRoots.rootBundlePem()).toBe(signer.rootPem);
  });

  test('ENABLE_CA_SERVER=false: nobody signs', async () => {
    expect(await newMeshSigner(options({ ENABLE_CA_SERVER: 'false' }))).toBeUndefined();
    expect(await newMeshSigner(options({ ENABLE_CA_SERVER: 'false', EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'example.com/s' }))).toBeUndefined();
  });

  test.each([
    [
      { EXTERNAL_CA: 'MESHD_RA_MESH_API' },
      SettingsError,
      'invalid value "MESHD_RA_MESH_API" for EXTERNAL_CA: expected empty or MESHD_RA_ORCH_API (MESHD_RA_MESH_API is not supported)',
    ],
    [
      { EXTERNAL_CA: 'MESHD_RA_ORCH_API' },
      SettingsError,
      'invalid value "" for ORCH_SIGNER: expected a signer name such as example.com/mesh-signer when EXTERNAL_CA=MESHD_RA_ORCH_API',
    ],
    [{ EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'mesh-signer' }, SettingsError, 'invalid value "mesh-signer" for ORCH_SIGNER'],
  ])('%j is refused at start-up', async (env, type, message) => {
    const error = await errorOf(signerFor(env, { kubeConfig, signerRootPem: signer.rootPem }));
    expect(error).toBeInstanceOf(type);
    expect(error.message).toContain(message);
  });

  test('external signing without Kubernetes or without the signer root is refused', async () => {
    const env = { EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'example.com/mesh-signer' };
    const noKube = await errorOf(newMeshSigner(options(env, { signerRootPem: signer.rootPem })));
    expect(noKube).toBeInstanceOf(UsageError);
    expect(noKube.message).toMatch(/needs a Kubernetes cluster/);
    const noRoot = await errorOf(newMeshSigner(options(env, { kubeConfig, signerRootFile: join(dir, 'missing.pem') })));
    expect(noRoot).toMatchObject({
      code: 'ca-material-invalid',
      message: `EXTERNAL_CA=MESHD_RA_ORCH_API needs the signer's root certificate in ${join(dir, 'missing.pem')}`,
    });
  });
});
