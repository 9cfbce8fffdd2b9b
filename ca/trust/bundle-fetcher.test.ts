import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';
import { waitFor } from '../../testing/wait-for.js';
import { newBundleFetcher, type BundleFetcher } from './bundle-fetcher.js';
import { parseCertificatesPem } from '../x509/certificate-info.js';
import { newClientCertAuthenticator } from '../authn/client-cert-authenticator.js';
import { buildSpiffeBundle } from './spiffe-bundle.js';
import { newTestAuthority, type TestAuthority } from '../testing/test-authority.js';
import { newTrustBundleSet, type TrustBundleSet } from './trust-bundle-set.js';

interface Answer {
  status: number;
  body: string;
}

describe('fetching federated trust bundles over HTTPS', () => {
  let webPki: TestAuthority;
  let ours: TestAuthority;
  let td1: TestAuthority;
  let td1Next: TestAuthority;
  let server: Server;
  let base: string;
  const answers = new Map<string, Answer>();
  const hits: string[] = [];
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    [webPki, ours, td1, td1Next] = await Promise.all([
      newTestAuthority('web'),
      newTestAuthority('cluster.local'),
      newTestAuthority('td1'),
      newTestAuthority('td1'),
    ]);
    const serving = webPki.loopbackServer();
    server = createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
      hits.push(req.url ?? '');
      const answer = answers.get(req.url ?? '');
      if (!answer) return; // never answers: a hung endpoint
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const stop of stops) await stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const roots = (authority: TestAuthority) => parseCertificatesPem(authority.rootPem, 'roots');
  const bundle = (authorities: TestAuthority[], options: { refreshHintSeconds?: number; sequence?: number } = {}) =>
    buildSpiffeBundle(authorities.flatMap(roots), options);

  /** Starts a fetcher of `path` on its own fake clock (stopped in afterAll); `systemRoots` drops the test TLS root. */
  const launch = (path: string, options: { systemRoots?: boolean } = {}) => {
    const clock = new FakeClock(Date.now());
    const entries: LogEntry[] = [];
    const set: TrustBundleSet = newTrustBundleSet({ trustDomain: 'cluster.local', localRoots: ours.ca });
    const changes: number[] = [];
    set.onChange(() => changes.push(clock.now()));
    const fetcher: BundleFetcher = newBundleFetcher({
      endpoints: [{ trustDomain: 'td1', url: `${base}${path}` }],
      trustBundles: set,
      clock,
      log: newRecordingLogger(entries, {}, 'spiffe'),
      ...(options.systemRoots ? {} : { tlsRootsPem: webPki.rootPem }),
    });
    const abort = new AbortController();
    const running = fetcher.start(abort.signal);
    stops.push(async () => {
      abort.abort();
      await running;
    });
    const ready = fetcher.waitForReady!(abort.signal);
    const status = () => fetcher.status()[0]!;
    return { clock, set, status, changes, entries, abort, running, ready };
  };
  const start = async (path: string, options: { systemRoots?: boolean } = {}) => {
    const launched = launch(path, options);
    await launched.ready;
    return launched;
  };

  test('fetched at start, refreshed after the refresh hint; a change notifies; its workloads authenticate', async () => {
    // Issued before the fetcher's fake clock starts: valid from a real second that clock has reached.
    const identity = 'spiffe://td1/ns/shop/sa/cart';
    const current = td1.workload(identity).der;
    const next = td1Next.workload(identity).der;
    answers.set('/a', { status: 200, body: bundle([td1], { refreshHintSeconds: 60, sequence: 1 }) });
    const { clock, set, status, changes } = await start('/a');
    const t0 = clock.now();
    expect(set.rootsFor('td1').map((r) => r.pem)).toEqual([td1.rootPem]);
    expect(changes).toEqual([t0]);
    expect(status()).toMatchObject({ roots: 1, sequence: 1, consecutiveFailures: 0, lastSuccessMs: t0, nextFetchMs: t0 + 60_000 });
    const authenticator = newClientCertAuthenticator({ ca: ours.ca, trustDomain: 'cluster.local', clock, trustBundles: set });
    expect(await authenticator.authenticate({ peerCertificates: [current] })).toEqual({ identities: [identity], authenticator: 'client-cert' });

    // Rotation at td1: the new root is published beside the old one.
    answers.set('/a', { status: 200, body: bundle([td1, td1Next], { refreshHintSeconds: 60, sequence: 2 }) });
    clock.advance(60_000);
    await waitFor(() => set.rootsFor('td1').length === 2, { description: 'the refreshed bundle' });
    expect(changes).toEqual([t0, t0 + 60_000]);
    expect(status()).toMatchObject({ roots: 2, sequence: 2, nextFetchMs: t0 + 120_000 });
    expect(await authenticator.authenticate({ peerCertificates: [next] })).toMatchObject({ identities: [identity] });

    // The same bundle again: no notification.
    clock.advance(60_000);
    await waitFor(() => status().lastSuccessMs === t0 + 120_000);
    expect(changes).toHaveLength(2);
  });

  test('failures keep the last good bundle and back off exponentially until the endpoint recovers', async () => {
    answers.set('/b', { status: 200, body: bundle([td1]) });
    const { clock, set, status, changes, entries } = await start('/b');
    const t0 = clock.now();
    expect(status().nextFetchMs).toBe(t0 + 5 * 60_000);

    answers.set('/b', { status: 503, body: 'busy' });
    clock.advance(5 * 60_000);
    await waitFor(() => status().consecutiveFailures === 1);
    expect(status()).toMatchObject({ lastError: 'the bundle endpoint answered HTTP 503', nextFetchMs: t0 + 5 * 60_000 + 1000, roots: 1 });

    answers.set('/b', { status: 200, body: '{"keys": []}' });
    clock.advance(1000);
    await waitFor(() => status().consecutiveFailures === 2);
    expect(status()).toMatchObject({ lastError: 'the trust bundle holds no X.509 authority', nextFetchMs: t0 + 5 * 60_000 + 1000 + 2000 });
    clock.advance(2000);
    await waitFor(() => status().consecutiveFailures === 3);
    expect(status().nextFetchMs).toBe(clock.now() + 4000);
    expect(set.rootsFor('td1').map((r) => r.pem)).toEqual([td1.rootPem]);
    expect(changes).toHaveLength(1);
    expect(entries.filter((e) => e.message === 'fetching the trust bundle of a federated domain failed').map((e) => e.fields['retryMs'])).toEqual([
      1000, 2000, 4000,
    ]);

    answers.set('/b', { status: 200, body: td1Next.rootPem });
    clock.advance(4000);
    await waitFor(() => status().consecutiveFailures === 0);
    expect(set.rootsFor('td1').map((r) => r.pem)).toEqual([td1Next.rootPem]);
    expect(status().lastError).toBeUndefined();
    expect(status().nextFetchMs).toBe(clock.now() + 5 * 60_000);
  });

  test('an endpoint whose TLS certificate the trusted roots do not vouch for is never used', async () => {
    answers.set('/c', { status: 200, body: bundle([td1]) });
    const { set, status } = await start('/c', { systemRoots: true });
    expect(status().consecutiveFailures).toBe(1);
    expect(status().lastError).toMatch(/certificate/i);
    expect(set.rootsFor('td1')).toEqual([]);
    expect(hits).not.toContain('/c');
  });

  test('a hung endpoint times out on the injected clock; stopping ends the fetcher', async () => {
    const { clock, status, ready, abort, running } = launch('/hang');
    await waitFor(() => hits.includes('/hang'), { description: 'the request to reach the server' });
    clock.advance(10_000);
    await ready;
    expect(status()).toMatchObject({
      consecutiveFailures: 1,
      lastError: 'the bundle endpoint did not answer within 10000 ms',
      nextFetchMs: clock.now() + 1000,
    });
    abort.abort();
    await expect(running).resolves.toBeUndefined();
  });
});
