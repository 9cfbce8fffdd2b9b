import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { newMetrics, newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { waitFor } from '../../testing/wait-for.js';
import type { CaStore } from '../store/ca-store.js';
import { buildCsr } from '../x509/csr-builder.js';
import { newFolderCaStore } from '../store/folder-ca-store.js';
import { newMeshCa, type MeshCa, type MeshCaOptions } from './new-mesh-ca.js';
import { daemonSettings, opensslVerify, removeDir, tempDir } from '../testing/test-support.js';
import { meshCaSettingsFromSettings } from '../ca-settings.js';

const HOUR = 3_600_000;
const WEB = 'spiffe://cluster.local/ns/apps/sa/web';
const DB = 'spiffe://cluster.local/ns/data/sa/db';

const ROTATION_ENV = {
  CASERVER_SELF_SIGNED_CA_CERT_TTL: '100h',
  CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '1h',
  CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '20',
  CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: 'false',
};

/** A store that counts loads, to see the rotator's checks happen. */
function counting(store: CaStore): CaStore & { loads: number } {
  const wrapped = {
    description: store.description,
    loads: 0,
    load: () => {
      wrapped.loads++;
      return store.load();
    },
    save: store.save,
  };
  return wrapped;
}

describe('self-signed CA', () => {
  let dir: string;
  let workloadKey: KeyObject;

  beforeAll(async () => {
    dir = await tempDir();
    workloadKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  });

  afterAll(async () => {
    await removeDir(dir);
  });

  const start = (
    folder: string,
    clock: FakeClock,
    env: Record<string, string> = ROTATION_ENV,
    extra: Partial<MeshCaOptions> = {},
  ): Promise<MeshCa | undefined> =>
    newMeshCa({
      caSettings: meshCaSettingsFromSettings(daemonSettings({ ROOT_CA_DIR: join(dir, 'no-cacerts'), ...env })),
      log: newNopLogger('pkica'),
      clock,
      selfSignedStore: newFolderCaStore(join(dir, folder)),
      selfSignedKeyType: 'ecdsa-p256',
      ...extra,
    });

  test('ENABLE_CA_SERVER=false starts no CA', async () => {
    expect(await start('disabled', new FakeClock(), { ENABLE_CA_SERVER: 'false' })).toBeUndefined();
  });

  test('a restart keeps the root (folder store)', async () => {
    const clock = new FakeClock(Date.now());
    const first = await start('restart', clock);
    expect(first?.mode).toBe('self-signed');
    const root = first!.authority.rootBundlePem();
    expect(new X509Certificate(root).subject).toBe('O=cluster.local');
    const second = await start('restart', clock);
    expect(second!.authority.rootBundlePem()).toBe(root);
    const issued = second!.authority.signCsr(buildCsr({ key: workloadKey }), WEB, 0);
    expect(await opensslVerify(dir, { roots: root, leaf: issued.certPem })).toMatchObject({ ok: true });
  });

  test('the root TTL and, with a zero interval, no rotator', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const mesh = await start('ttl', clock, { CASERVER_SELF_SIGNED_CA_CERT_TTL: '10h', CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '0s' });
    expect(mesh?.rotator).toBeUndefined();
    const root = new X509Certificate(mesh!.authority.rootBundlePem());
    expect(Date.parse(root.validTo) - Date.parse(root.validFrom)).toBe(10 * HOUR);
    expect(Date.parse(root.validFrom)).toBe(clock.now());
  });

  test('rotation: workloads issued before and after keep verifying each other', async () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const clock = new FakeClock(t0);
    const metrics = newMetrics('pilot-discovery');
    const mesh = (await start('rotation', clock, ROTATION_ENV, { metrics }))!;
    const rotator = mesh.rotator!;
    const oldRoot = mesh.authority.rootBundlePem();

    clock.advance(79 * HOUR); // 21h of 100h left: above the 20% grace period
    expect(await rotator.checkNow()).toBe('unchanged');
    const before = mesh.authority.signCsr(buildCsr({ key: workloadKey }), WEB, 24 * HOUR);
    clock.advance(2 * HOUR); // 19h left
    expect(await rotator.checkNow()).toBe('rotated');
    const bundle = mesh.authority.rootBundlePem();
    const roots = bundle.split('-----END CERTIFICATE-----').filter((s) => s.includes('BEGIN'));
    expect(roots).toHaveLength(2);
    const newRoot = mesh.authority.bundle().roots[0]!.pem;
    expect(bundle).toBe(newRoot + oldRoot);
    expect(Date.parse(new X509Certificate(newRoot).validTo)).toBe(t0 + 181 * HOUR);
    expect((await metrics.gauge('ca_server_root_cert_expiry_timestamp').get()).values[0]?.value).toBe((t0 + 181 * HOUR) / 1000);

    const after = mesh.authority.signCsr(buildCsr({ key: workloadKey }), DB, 24 * HOUR);
    expect(after.certChainPem[after.certChainPem.length - 1]).toBe(bundle);
    const at = clock.now() + HOUR;
    // Both workloads verify against the bundle each now receives, and against either root alone:
    // a peer that has not picked up the new bundle yet still accepts the new certificate.
    for (const leaf of [before.certPem, after.certPem]) {
      for (const roots of [bundle, oldRoot, newRoot]) {
        expect(await opensslVerify(dir, { roots, leaf, atMs: at })).toMatchObject({ ok: true });
      }
    }

    // A restart picks up the rotated material.
    const restarted = (await start('rotation', clock))!;
    expect(restarted.authority.rootBundlePem()).toBe(bundle);

    // Once the old root expires it leaves the bundle; certificates issued since still verify.
    clock.advance(20 * HOUR);
    expect(await rotator.checkNow()).toBe('pruned');
    expect(mesh.authority.rootBundlePem()).toBe(newRoot);
    expect(await opensslVerify(dir, { roots: newRoot, leaf: after.certPem, atMs: clock.now() })).toMatchObject({ ok: true });
    // The other replica adopts what this one wrote.
    expect(await restarted.rotator!.checkNow()).toBe('reloaded');
    expect(restarted.authority.rootBundlePem()).toBe(newRoot);
  });

  test('checks run every interval after a jitter below one interval', async () => {
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const store = counting(newFolderCaStore(join(dir, 'jitter')));
    const mesh = (await start(
      'jitter',
      clock,
      { ...ROTATION_ENV, CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: 'true' },
      { selfSignedStore: store, random: () => 0.5 },
    ))!;
    const loadsAtStart = store.loads;
    const abort = new AbortController();
    const running = mesh.rotator!.start(abort.signal);
    try {
      clock.advance(30 * 60_000); // the jitter: half an interval
      await waitFor(() => clock.pendingTimers() === 1, { description: 'the first interval timer' });
      clock.advance(HOUR - 1);
      expect(store.loads).toBe(loadsAtStart);
      clock.advance(1);
      await waitFor(() => store.loads === loadsAtStart + 1, { description: 'the first check' });
      await waitFor(() => clock.pendingTimers() === 1, { description: 'the next interval timer' });
      clock.advance(HOUR);
      await waitFor(() => store.loads === loadsAtStart + 2, { description: 'the second check' });
    } finally {
      abort.abort();
      await running;
    }
  });
});
