import type { experimental } from '@grpc/grpc-js';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { newRealClock } from '../../runtime/index.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { newClientCertAuthenticator } from '../authn/client-cert-authenticator.js';
import { newTestAuthority, type TestAuthority } from '../testing/test-authority.js';
import { newFileRoots } from './file-roots.js';

/** A `--caCertFile` watcher whose reads the test decides: `read(text)`, or `read(null)` for a file that cannot be read. */
function scriptedProvider(): experimental.CertificateProvider & { read(text: string | null): void; listeners(): number } {
  const listeners = new Set<experimental.CaCertificateUpdateListener>();
  return {
    addCaCertificateListener: (listener) => listeners.add(listener),
    removeCaCertificateListener: (listener) => listeners.delete(listener),
    addIdentityCertificateListener: () => undefined,
    removeIdentityCertificateListener: () => undefined,
    read: (text) => listeners.forEach((listener) => listener(text === null ? null : { caCertificate: Buffer.from(text) })),
    listeners: () => listeners.size,
  };
}

describe('the client certificate roots of --caCertFile', () => {
  let first: TestAuthority;
  let second: TestAuthority;

  beforeAll(async () => {
    [first, second] = await Promise.all([newTestAuthority('cluster.local'), newTestAuthority('cluster.local')]);
  });

  const fingerprints = (roots: ReturnType<ReturnType<typeof newFileRoots>['rootsFor']>): string[] => roots.map((root) => root.x509.fingerprint256);

  test('follow the file for our trust domain only; a file that cannot be read or parsed keeps the roots read before, said once', () => {
    const provider = scriptedProvider();
    const entries: LogEntry[] = [];
    const roots = newFileRoots({ trustDomain: 'cluster.local', provider, log: newRecordingLogger(entries) });
    expect(roots.rootsFor('cluster.local')).toEqual([]);
    const stop = roots.watch();
    provider.read(first.rootPem);
    expect(fingerprints(roots.rootsFor('cluster.local'))).toEqual([first.ca.bundle().roots[0]!.x509.fingerprint256]);
    expect(roots.rootsFor('other.domain')).toEqual([]);

    provider.read(null);
    provider.read(null);
    provider.read('not a certificate');
    expect(fingerprints(roots.rootsFor('cluster.local'))).toEqual([first.ca.bundle().roots[0]!.x509.fingerprint256]);
    expect(entries.filter((entry) => entry.level === 'error').map((entry) => entry.message)).toEqual([
      '--caCertFile cannot be read: client certificates verify against the roots read before',
      '--caCertFile holds no valid certificate: client certificates verify against the roots read before',
    ]);

    provider.read(second.rootPem);
    expect(fingerprints(roots.rootsFor('cluster.local'))).toEqual([second.ca.bundle().roots[0]!.x509.fingerprint256]);
    stop();
    expect(provider.listeners()).toBe(0);
  });

  test('a client certificate is accepted while its root is the file, refused once the file holds another root', async () => {
    const provider = scriptedProvider();
    const roots = newFileRoots({ trustDomain: 'cluster.local', provider, log: newRecordingLogger([]) });
    const authenticator = newClientCertAuthenticator({ trustDomain: 'cluster.local', clock: newRealClock(), trustBundles: roots });
    const stop = roots.watch();
    const workload = first.workload('spiffe://cluster.local/ns/foo/sa/sleep');
    provider.read(first.rootPem);
    expect(await authenticator.authenticate({ peerCertificates: [workload.der] })).toEqual({
      identities: ['spiffe://cluster.local/ns/foo/sa/sleep'],
      authenticator: 'client-cert',
    });
    provider.read(second.rootPem);
    await expect(authenticator.authenticate({ peerCertificates: [workload.der] })).rejects.toThrow(/client certificate of cluster\.local/);
    stop();
  });

  test('without --caCertFile there are no roots, and nothing to watch', () => {
    const roots = newFileRoots({ trustDomain: 'cluster.local', provider: null, log: newRecordingLogger([]) });
    roots.watch()();
    expect(roots.rootsFor('cluster.local')).toEqual([]);
  });
});
