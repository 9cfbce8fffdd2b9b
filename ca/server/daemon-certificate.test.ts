import { describe, expect, test } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newCertificateAuthority } from '../authority/certificate-authority.js';
import { daemonServerNames, newDaemonCertificate } from './daemon-certificate.js';
import { loadKeyCertBundle } from '../authority/key-cert-bundle.js';
import { newSelfSignedMaterial } from '../authority/self-signed-root.js';
import { daemonSettings } from '../testing/test-support.js';
import { daemonServingFromSettings } from '../ca-settings.js';

const HOUR = 3_600_000;

describe('the daemon serving certificate', () => {
  test('names: the service in its namespace, localhost, 127.0.0.1 and MESHD_CUSTOM_HOST', () => {
    expect(
      daemonServerNames(daemonServingFromSettings(daemonSettings({ POD_NAMESPACE: 'mesh-prod', MESHD_CUSTOM_HOST: 'meshd.example.com,10.1.2.3' }))),
    ).toEqual({
      dnsNames: ['meshd.mesh-prod.svc', 'meshd.mesh-prod.svc.cluster.local', 'localhost', 'meshd.example.com'],
      ips: ['127.0.0.1', '10.1.2.3'],
    });
  });

  test('is renewed with a new key at half its life and handed to listeners', async () => {
    const clock = new FakeClock(Date.parse('2026-05-01T00:00:00Z'));
    const material = await newSelfSignedMaterial({
      keyType: 'ecdsa-p256',
      rsaKeySize: 2048,
      trustDomain: 'cluster.local',
      ttlMs: 1000 * HOUR,
      nowMs: clock.now(),
    });
    const ca = newCertificateAuthority({ bundle: loadKeyCertBundle(material), clock, defaultTtlMs: 24 * HOUR, maxTtlMs: 48 * HOUR });
    const cert = newDaemonCertificate({ ca, dnsNames: ['localhost'], ips: ['127.0.0.1'], ttlMs: 24 * HOUR, clock, log: newNopLogger('serverca') });
    const updates: string[] = [];
    cert.addIdentityCertificateListener((update) => updates.push(update?.certificate.toString() ?? 'none'));
    await Promise.resolve();
    expect(updates).toEqual([cert.current().certChainPem]);
    const first = cert.current();
    expect(new X509Certificate(first.certChainPem).checkIssued(new X509Certificate(first.rootsPem))).toBe(true);
    cert.start();
    clock.advance(12 * HOUR - 1000);
    expect(cert.current()).toBe(first);
    clock.advance(1000);
    expect(cert.current()).not.toBe(first);
    expect(cert.current().keyPem).not.toBe(first.keyPem);
    expect(updates).toHaveLength(2);
    expect(cert.current().notAfterMs).toBe(clock.now() + 24 * HOUR);
    cert.stop();
    clock.advance(48 * HOUR);
    expect(updates).toHaveLength(2);
  });
});
