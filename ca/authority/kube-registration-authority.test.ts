import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CertificatesV1Api, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { newInformerSource, newMetrics, newNopLogger, newRealClock, type KubeObject, type MeshMetrics, type Source } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { CaError } from '../ca-error.js';
import { newCertificateService } from '../server/certificate-service.js';
import { buildCsr } from '../x509/csr-builder.js';
import { csrRequestedNames } from '../x509/csr-requested-names.js';
import { newKubeRegistrationAuthority, type KubeRegistrationAuthority } from './kube-registration-authority.js';
import { HOUR, newTestAuthority, type TestAuthority } from '../testing/test-authority.js';
import { opensslVerify, removeDir, tempDir } from '../testing/test-support.js';

const SIGNER = 'example.com/mesh-signer';
const WEB = 'spiffe://cluster.local/ns/apps/sa/web';
const DENIED = 'spiffe://cluster.local/ns/apps/sa/denied';
const FAILING = 'spiffe://cluster.local/ns/apps/sa/failing';
const WRONG_CA = 'spiffe://cluster.local/ns/apps/sa/wrong-ca';

type CsrObject = V1CertificateSigningRequest & KubeObject;

describe('the Kubernetes registration authority against a test signer', () => {
  const clock = new FakeClock(Date.now());
  let dir: string;
  let kube: ApiServerDouble;
  let certificates: CertificatesV1Api;
  let signerCa: TestAuthority;
  let otherCa: TestAuthority;
  let signerSource: Source<CsrObject>;
  const stopSigner = new AbortController();
  let signerRunning: Promise<void>;
  /** Every request the signer saw, in order, as first seen; and every version of each, by uid. */
  const seen: CsrObject[] = [];
  const history = new Map<string, CsrObject[]>();
  const signerErrors: unknown[] = [];
  let ra: KubeRegistrationAuthority;
  let key: KeyObject;

  /** A signer (and, for DENIED, an approver) acting on requests for SIGNER, as a real one would. */
  const act = async (csr: CsrObject): Promise<void> => {
    const name = csr.metadata!.name!;
    const conditions = csr.status?.conditions ?? [];
    const pem = Buffer.from(csr.spec.request, 'base64').toString('utf8');
    const identity = csrRequestedNames(pem).find((n) => n.type === 'uri')?.value;
    if (identity === DENIED && conditions.length === 0) {
      await certificates.replaceCertificateSigningRequestApproval({
        name,
        body: { ...csr, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'PolicyRefused', message: 'not on the list' }] } },
      });
      return;
    }
    if (!conditions.some((c) => c.type === 'Approved' && c.status === 'True') || csr.status?.certificate) return;
    if (conditions.some((c) => c.type === 'Failed')) return;
    if (identity === FAILING) {
      const failed = { type: 'Failed', status: 'True', reason: 'SignerError', message: 'HSM unavailable' };
      await certificates.replaceCertificateSigningRequestStatus({ name, body: { ...csr, status: { ...csr.status, conditions: [...conditions, failed] } } });
      return;
    }
    const ca = identity === WRONG_CA ? otherCa : signerCa;
    const issued = ca.ca.signCsr(pem, identity ?? '', (csr.spec.expirationSeconds ?? 3600) * 1000);
    await certificates.replaceCertificateSigningRequestStatus({
      name,
      body: { ...csr, status: { ...csr.status, certificate: Buffer.from(issued.certPem).toString('base64') } },
    });
  };

  beforeAll(async () => {
    dir = await tempDir();
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    certificates = kube.kubeConfig().makeApiClient(CertificatesV1Api);
    [signerCa, otherCa] = await Promise.all([newTestAuthority('cluster.local', clock), newTestAuthority('cluster.local', clock)]);
    signerSource = newInformerSource<CsrObject>({
      name: 'test-signer',
      kubeConfig: kube.kubeConfig(),
      path: '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      fieldSelector: `spec.signerName=${SIGNER}`,
      log: newNopLogger('test'),
      clock: newRealClock(),
    });
    signerSource.subscribe((event) => {
      if (event.type !== 'apply') return;
      const uid = event.object.metadata?.uid ?? '';
      if (!history.has(uid)) seen.push(event.object);
      history.set(uid, [...(history.get(uid) ?? []), event.object]);
      act(event.object).catch((err: unknown) => signerErrors.push(err));
    });
    signerRunning = signerSource.start(stopSigner.signal);
    await signerSource.waitForSync();
    ra = newKubeRegistrationAuthority({
      kubeConfig: kube.kubeConfig(),
      signerName: SIGNER,
      signerRootPem: signerCa.rootPem,
      clock,
      log: newNopLogger('ca'),
      defaultTtlMs: HOUR,
      maxTtlMs: 10 * HOUR,
    });
    key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  });

  afterAll(async () => {
    stopSigner.abort();
    await signerRunning?.catch(() => undefined);
    await kube?.close();
    await removeDir(dir);
  });

  /** Moves the fake clock in `stepMs` steps until `promise` settles; its outcome, or the error. */
  const drive = async <T>(promise: Promise<T>, stepMs = 100): Promise<T | CaError> => {
    let settled = false;
    const outcome = promise.then(
      (value) => value,
      (err: unknown) => err as CaError,
    );
    void outcome.finally(() => (settled = true));
    await waitFor(
      () => {
        if (!settled) clock.advance(stepMs);
        return settled;
      },
      { timeoutMs: 4000, description: 'the signing request to settle' },
    );
    return outcome;
  };
  const csrFor = (identity: string, extra: { dnsNames?: string[] } = {}) => buildCsr({ key, sans: { uris: [identity], ...extra } });
  const stored = () => kube.objects('certificates.k8s.io/v1', 'CertificateSigningRequest');

  test('a CSR for the caller identity comes back signed, with the signer root; the request is approved, then deleted', async () => {
    const before = seen.length;
    const csr = csrFor(WEB);
    const result = await drive(ra.signCsr(csr, WEB, 2 * HOUR));
    if (result instanceof Error) throw result;
    expect(result.certChainPem).toEqual([result.certPem, signerCa.rootPem]);
    const leaf = new X509Certificate(result.certPem);
    expect(leaf.subjectAltName).toBe(`URI:${WEB}`);
    expect(result.notAfterMs - Date.parse(leaf.validFrom)).toBe(2 * HOUR);
    expect(await opensslVerify(dir, { roots: signerCa.rootPem, leaf: result.certPem, atMs: clock.now() })).toMatchObject({ ok: true });

    expect(seen).toHaveLength(before + 1);
    const request = seen[before]!;
    expect(request.metadata?.name).toMatch(/^csr-workload-/);
    expect(request.spec).toMatchObject({
      signerName: SIGNER,
      usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'],
      expirationSeconds: 7200,
    });
    expect(Buffer.from(request.spec.request, 'base64').toString('utf8')).toBe(csr);
    const versions = history.get(request.metadata!.uid!)!;
    expect(versions.flatMap((v) => v.status?.conditions ?? []).find((c) => c.type === 'Approved')).toMatchObject({
      status: 'True',
      reason: 'MeshCertificateService',
      message: `approved by the mesh certificate service for ${WEB}`,
    });
    expect(stored()).toEqual([]);
    expect(signerErrors).toEqual([]);
  });

  test('a short TTL asks for the API minimum of 600 s; the default TTL applies to a non-positive one', async () => {
    const before = seen.length;
    const short = await drive(ra.signCsr(csrFor(WEB), WEB, 60_000));
    const defaulted = await drive(ra.signCsr(csrFor(WEB), WEB, 0));
    expect(short).not.toBeInstanceOf(Error);
    expect(defaulted).not.toBeInstanceOf(Error);
    expect(seen.slice(before).map((r) => r.spec.expirationSeconds)).toEqual([600, 3600]);
  });

  test.each([
    ['another identity', () => csrFor('spiffe://cluster.local/ns/kube-system/sa/admin'), 'identity-invalid'],
    ['no names', () => buildCsr({ key }), 'identity-invalid'],
    ['an extra DNS name', () => csrFor(WEB, { dnsNames: ['evil.example.com'] }), 'identity-invalid'],
    ['garbage', () => 'garbage', 'csr-malformed'],
  ])('a CSR asking for %s is refused before anything is sent to the signer', async (_name, csr, code) => {
    const before = seen.length;
    await expect(ra.signCsr(csr(), WEB, HOUR)).rejects.toMatchObject({ code });
    await expect(ra.signCsr(csrFor(WEB), WEB, 11 * HOUR)).rejects.toMatchObject({ code: 'ttl-too-long' });
    // Events arrive in order: the next request the signer sees is this good one.
    expect(await drive(ra.signCsr(csrFor(WEB), WEB, HOUR))).not.toBeInstanceOf(Error);
    expect(seen).toHaveLength(before + 1);
  });

  test('a request the approver denies is refused with the reason, and deleted', async () => {
    const waiting = newKubeRegistrationAuthority({
      kubeConfig: kube.kubeConfig(),
      signerName: SIGNER,
      signerRootPem: signerCa.rootPem,
      clock,
      log: newNopLogger('ca'),
      defaultTtlMs: HOUR,
      maxTtlMs: HOUR,
      approve: false,
    });
    const outcome = await drive(waiting.signCsr(csrFor(DENIED), DENIED, HOUR));
    expect(outcome).toBeInstanceOf(CaError);
    expect(outcome).toMatchObject({
      code: 'sign-failed',
      message: expect.stringMatching(/^certificate signing request csr-workload-\w+ was denied \(PolicyRefused: not on the list\)$/),
    });
    expect(stored()).toEqual([]);
  });

  test('a request the signer fails, and a certificate not from the signer root, are refused', async () => {
    const failed = await drive(ra.signCsr(csrFor(FAILING), FAILING, HOUR));
    expect(failed).toMatchObject({ code: 'sign-failed', message: expect.stringMatching(/was failed \(SignerError: HSM unavailable\)$/) });
    const wrong = await drive(ra.signCsr(csrFor(WRONG_CA), WRONG_CA, HOUR));
    expect(wrong).toMatchObject({
      code: 'sign-failed',
      message: 'the signed certificate does not verify against the signer root: the certificate does not chain to a trusted root',
    });
    expect(stored()).toEqual([]);
  });

  /** Settles `promise` as an outcome, and tracks whether it has. */
  const track = <T>(promise: Promise<T>) => {
    const state = {
      settled: false,
      outcome: promise.then(
        (v) => v,
        (err: unknown) => err as CaError,
      ),
    };
    void state.outcome.finally(() => (state.settled = true));
    return state;
  };
  /** Waits until the RA sleeps on the clock (true) or has settled (false). */
  const nextSleep = async (state: { settled: boolean }): Promise<boolean> =>
    !((await waitFor(() => (state.settled ? 'settled' : clock.pendingTimers() === 1 ? 'sleeping' : undefined))) === 'settled');
  /** Advances 100 ms at a time until the pending sleep fires; how long it was. */
  const wake = (): number => {
    let waited = 0;
    while (clock.pendingTimers() > 0) {
      clock.advance(100);
      waited += 100;
    }
    return waited;
  };
  const nobody = () =>
    newKubeRegistrationAuthority({
      kubeConfig: kube.kubeConfig(),
      signerName: 'example.com/nobody',
      signerRootPem: signerCa.rootPem,
      clock,
      log: newNopLogger('ca'),
      defaultTtlMs: HOUR,
      maxTtlMs: HOUR,
      maxPollMs: 1600,
    });

  test('no signer: reads back off exponentially on the injected clock, then time out; the request is deleted', async () => {
    const started = clock.now();
    const state = track(nobody().signCsr(csrFor(WEB), WEB, HOUR));
    const delays: number[] = [];
    while (await nextSleep(state)) delays.push(wake());
    expect(delays.slice(0, 7)).toEqual([100, 200, 400, 800, 1600, 1600, 1600]);
    expect(await state.outcome).toMatchObject({
      code: 'ca-unavailable',
      message: expect.stringMatching(/^signer example.com\/nobody did not sign certificate signing request csr-workload-\w+ within 30s$/),
    });
    expect(clock.now() - started).toBeGreaterThanOrEqual(30_000);
    expect(clock.now() - started).toBeLessThan(30_000 + 1600);
    expect(stored()).toEqual([]);
  });

  test('API errors while waiting are retried until the certificate arrives', async () => {
    const csr = csrFor(WEB);
    const state = track(nobody().signCsr(csr, WEB, HOUR));
    expect(await nextSleep(state)).toBe(true);
    kube.faults.failNext(2, 500);
    wake();
    expect(await nextSleep(state)).toBe(true);
    wake();
    expect(await nextSleep(state)).toBe(true);
    const [request] = stored() as CsrObject[];
    const issued = signerCa.ca.signCsr(csr, WEB, HOUR);
    await certificates.replaceCertificateSigningRequestStatus({
      name: request!.metadata!.name!,
      body: { ...request!, status: { ...request!.status, certificate: Buffer.from(issued.certPem).toString('base64') } },
    });
    wake();
    const outcome = await state.outcome;
    expect(outcome).toMatchObject({ certPem: issued.certPem, certChainPem: [issued.certPem, signerCa.rootPem] });
    expect(stored()).toEqual([]);
  });

  test('the certificate service signs through the registration authority and counts refusals', async () => {
    const metrics: MeshMetrics<'pilot-discovery'> = newMetrics('pilot-discovery');
    let identity = WEB;
    const service = newCertificateService({
      signer: ra,
      authenticators: [{ name: 'test', authenticate: async () => ({ identities: [identity], authenticator: 'test' }) }],
      metrics,
      log: newNopLogger('serverca'),
    });
    const chain = await drive(service.createCertificate({ csr: csrFor(WEB), validityDurationSeconds: 3600 }, {}));
    expect(Array.isArray(chain) && new X509Certificate(chain[0]!).subjectAltName).toBe(`URI:${WEB}`);
    identity = FAILING;
    expect(await drive(service.createCertificate({ csr: csrFor(FAILING), validityDurationSeconds: 3600 }, {}))).toMatchObject({ code: 'sign-failed' });
    const signErrors = (await metrics.counter('ca_server_csr_sign_err_count').get()).values;
    expect(signErrors.find((v) => v.labels['error'] === 'cert-gen')?.value).toBe(1);
    expect((await metrics.counter('ca_server_success_cert_issuance_count').get()).values[0]?.value).toBe(1);
  });
});
