import { X509Certificate } from 'node:crypto';
import type { KubeConfig, V1CertificateSigningRequest } from '@kubernetes/client-node';
import { lazyApiClient, type Clock, type KubeApi, type Logger } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { IssuedCertificate } from './certificate-authority.js';
import { parseCertificatesPem, type CertificateInfo } from '../x509/certificate-info.js';
import { csrRequestedNames } from '../x509/csr-requested-names.js';
import type { CsrSigner } from './csr-signer.js';
import { parseAndVerifyCsr } from '../x509/csr.js';
import { decodePemBlocks, encodePem } from '../../pki/index.js';
import type { RootBundleSource } from '../trust/trust-bundle-set.js';
import { chainProblem } from '../../pki/index.js';
import { errorMessage } from '../../runtime/index.js';

export interface KubeRegistrationAuthorityOptions {
  readonly kubeConfig: KubeConfig;
  /** ORCH_SIGNER: the `signerName` of the CertificateSigningRequests, e.g. `example.com/mesh-signer`. */
  readonly signerName: string;
  /**
   * The signer's CA certificates, PEM: issued certificates must chain to them, they end every
   * returned chain, and they are our trust domain's roots.
   */
  readonly signerRootPem: string;
  readonly clock: Clock;
  /** The `ca` scope. */
  readonly log: Logger;
  /** DEFAULT_WORKLOAD_CERT_TTL. */
  readonly defaultTtlMs: number;
  /** MAX_WORKLOAD_CERT_TTL. */
  readonly maxTtlMs: number;
  /** How long to wait for the signer. Default 30 s. */
  readonly timeoutMs?: number;
  /** The first delay between reads of the request, doubled up to `maxPollMs`. Defaults 100 ms and 2 s. */
  readonly initialPollMs?: number;
  readonly maxPollMs?: number;
  /** Approve our own requests (the daemon holds the approval right). Default true; false leaves it to another approver. */
  readonly approve?: boolean;
}

/** Signs workload CSRs through the Kubernetes CertificateSigningRequest API (EXTERNAL_CA=MESHD_RA_ORCH_API). */
export interface KubeRegistrationAuthority extends CsrSigner, RootBundleSource {
  readonly signerName: string;
  signCsr(csrPem: string, identity: string, ttlMs: number): Promise<IssuedCertificate>;
  /** The lifetime a request gets: the default for non-positive, refused above the maximum. */
  resolveTtl(requestedMs: number): number;
}

/** The usages of a workload certificate, as the CertificateSigningRequest API spells them. */
export const WORKLOAD_CSR_USAGES = ['digital signature', 'key encipherment', 'server auth', 'client auth'] as const;

/** The API refuses shorter `expirationSeconds`. */
const MIN_EXPIRATION_SECONDS = 600;
const GENERATE_NAME = 'csr-workload-';

/**
 * A registration authority: checks the CSR and the caller's identity as our CA would, then has
 * the external signer of ORCH_SIGNER sign it. It creates a CertificateSigningRequest, approves
 * it, reads it back (backing off on the injected clock) until the signer has written
 * `status.certificate`, a condition Denied or Failed, or the timeout passes, checks what came
 * back, and deletes the request. Since the signer signs the CSR as written, a CSR must ask for
 * exactly the caller's identity.
 */
export function newKubeRegistrationAuthority(options: KubeRegistrationAuthorityOptions): KubeRegistrationAuthority {
  const { clock, log, signerName, defaultTtlMs, maxTtlMs } = options;
  const certificates = lazyApiClient(options.kubeConfig, (k8s) => k8s.CertificatesV1Api);
  const signerRoots = parseCertificatesPem(options.signerRootPem, 'the signer root certificate');
  const rootBundlePem = signerRoots.map((r) => r.pem).join('');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const initialPollMs = options.initialPollMs ?? 100;
  const maxPollMs = options.maxPollMs ?? 2000;
  const approve = options.approve ?? true;

  const resolveTtl = (requestedMs: number): number => {
    if (requestedMs <= 0) return defaultTtlMs;
    if (requestedMs > maxTtlMs) {
      throw new CaError('ttl-too-long', `requested TTL ${Math.round(requestedMs / 1000)}s is above the maximum ${Math.round(maxTtlMs / 1000)}s`);
    }
    return requestedMs;
  };

  const create = async (csrPem: string, ttlMs: number): Promise<V1CertificateSigningRequest> => {
    const [api, k8s] = await Promise.all([certificates(), import('@kubernetes/client-node')]);
    try {
      return await api.createCertificateSigningRequest({
        body: {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { generateName: GENERATE_NAME },
          spec: {
            request: Buffer.from(csrPem, 'utf8').toString('base64'),
            signerName,
            usages: [...WORKLOAD_CSR_USAGES],
            expirationSeconds: Math.max(MIN_EXPIRATION_SECONDS, Math.ceil(ttlMs / 1000)),
          },
        },
      });
    } catch (err) {
      throw new CaError('ca-unavailable', `creating the certificate signing request failed: ${apiErrorText(k8s, err)}`, { cause: err });
    }
  };

  const approveRequest = async (created: V1CertificateSigningRequest, identity: string): Promise<void> => {
    const [api, k8s] = await Promise.all([certificates(), import('@kubernetes/client-node')]);
    const name = created.metadata!.name!;
    let current = created;
    for (let attempt = 1; ; attempt++) {
      refuseIfFinished(current);
      const approved = {
        type: 'Approved',
        status: 'True',
        reason: 'MeshCertificateService',
        message: `approved by the mesh certificate service for ${identity}`,
        lastUpdateTime: new Date(clock.now()),
      };
      try {
        await api.replaceCertificateSigningRequestApproval({
          name,
          body: { ...current, status: { ...current.status, conditions: [...(current.status?.conditions ?? []), approved] } },
        });
        return;
      } catch (err) {
        // Someone else (an approver, the signer) wrote it meanwhile: approve the new version.
        if (!(err instanceof k8s.ApiException && err.code === 409) || attempt >= 3) {
          throw new CaError('ca-unavailable', `approving certificate signing request ${name} failed: ${apiErrorText(k8s, err)}`, { cause: err });
        }
        current = await api.readCertificateSigningRequest({ name });
      }
    }
  };

  const waitForCertificate = async (name: string): Promise<string> => {
    const [api, k8s] = await Promise.all([certificates(), import('@kubernetes/client-node')]);
    const deadline = clock.now() + timeoutMs;
    let delayMs = initialPollMs;
    let lastError: string | undefined;
    for (;;) {
      try {
        const current = await api.readCertificateSigningRequest({ name });
        refuseIfFinished(current);
        const certificate = current.status?.certificate;
        if (certificate) return Buffer.from(certificate, 'base64').toString('utf8');
        lastError = undefined;
      } catch (err) {
        if (err instanceof CaError) throw err;
        if (err instanceof k8s.ApiException && err.code === 404)
          throw new CaError('sign-failed', `certificate signing request ${name} was deleted before it was signed`);
        lastError = apiErrorText(k8s, err);
      }
      const left = deadline - clock.now();
      if (left <= 0) {
        throw new CaError(
          'ca-unavailable',
          `signer ${signerName} did not sign certificate signing request ${name} within ${Math.round(timeoutMs / 1000)}s${lastError ? ` (last error: ${lastError})` : ''}`,
        );
      }
      await clock.sleep(Math.min(delayMs, left));
      delayMs = Math.min(delayMs * 2, maxPollMs);
    }
  };

  const remove = async (name: string): Promise<void> => {
    const [api, k8s] = await Promise.all([certificates(), import('@kubernetes/client-node')]);
    try {
      await api.deleteCertificateSigningRequest({ name });
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return;
      log.warn({ name, error: apiErrorText(k8s, err) }, 'deleting a certificate signing request failed');
    }
  };

  return {
    signerName,
    resolveTtl,
    rootBundlePem: () => rootBundlePem,
    // The signer's roots come from configuration: they change only with a restart.
    onRootBundleChange: () => () => undefined,
    signCsr: async (csrPem, identity, requestedTtlMs) => {
      const ttlMs = resolveTtl(requestedTtlMs);
      const csr = parseAndVerifyCsr(csrPem);
      const names = csrRequestedNames(csrPem);
      if (names.length === 0 || names.some((n) => n.type !== 'uri' || n.value !== identity)) {
        throw new CaError('identity-invalid', 'the certificate request must ask for exactly the caller identity as its only subject alternative name');
      }
      const created = await create(csrPem, ttlMs);
      const name = created.metadata?.name;
      if (!name) throw new CaError('ca-unavailable', 'the API server returned a certificate signing request without a name');
      try {
        if (approve) await approveRequest(created, identity);
        const issuedPem = await waitForCertificate(name);
        const result = checkIssued(issuedPem, {
          identity,
          csrKey: csr.publicKey.export({ format: 'der', type: 'spki' }),
          signerRoots,
          rootBundlePem,
          nowMs: clock.now(),
        });
        if (log.isEnabled('debug')) log.debug({ name, identity, notAfter: new Date(result.notAfterMs).toISOString() }, 'external signer issued a certificate');
        return result;
      } finally {
        await remove(name);
      }
    },
  };
}

/** Throws when the signer or an approver has closed the request without a certificate. */
function refuseIfFinished(csr: V1CertificateSigningRequest): void {
  const name = csr.metadata?.name ?? '';
  for (const condition of csr.status?.conditions ?? []) {
    if (condition.status !== 'True' || (condition.type !== 'Denied' && condition.type !== 'Failed')) continue;
    const why = [condition.reason, condition.message].filter((s) => s).join(': ');
    const verb = condition.type === 'Denied' ? 'denied' : 'failed';
    throw new CaError('sign-failed', `certificate signing request ${name} was ${verb}${why ? ` (${why})` : ''}`);
  }
}

interface IssuedCheck {
  readonly identity: string;
  readonly csrKey: Buffer;
  readonly signerRoots: readonly CertificateInfo[];
  readonly rootBundlePem: string;
  readonly nowMs: number;
}

/**
 * What the signer wrote must be a certificate for the CSR's key, carrying exactly the caller's
 * identity, chaining to the signer's roots now. Returns leaf, intermediates, then our roots.
 */
function checkIssued(issuedPem: string, check: IssuedCheck): IssuedCertificate {
  let chain: X509Certificate[];
  try {
    chain = decodePemBlocks(issuedPem)
      .filter((b) => b.label === 'CERTIFICATE')
      .map((b) => new X509Certificate(b.der));
  } catch (err) {
    throw new CaError('sign-failed', 'the signer wrote an unreadable certificate', { cause: err });
  }
  const [leaf, ...rest] = chain;
  if (!leaf) throw new CaError('sign-failed', 'the signer wrote no certificate');
  if (!leaf.publicKey.export({ format: 'der', type: 'spki' }).equals(check.csrKey)) {
    throw new CaError('sign-failed', 'the signed certificate is not for the key of the request');
  }
  const uris = (leaf.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith('URI:'))
    .map((s) => s.slice(4));
  if (uris.length !== 1 || uris[0] !== check.identity) throw new CaError('sign-failed', 'the signed certificate does not carry exactly the caller identity');
  const problem = chainProblem({ leaf, intermediates: rest, anchors: check.signerRoots.map((r) => r.x509), nowMs: check.nowMs });
  if (problem) throw new CaError('sign-failed', `the signed certificate does not verify against the signer root: ${problem}`);
  const isRoot = (c: X509Certificate): boolean => check.signerRoots.some((r) => r.der.equals(c.raw));
  const certPem = encodePem('CERTIFICATE', leaf.raw);
  return {
    certPem,
    certChainPem: [certPem, ...rest.filter((c) => !isRoot(c)).map((c) => encodePem('CERTIFICATE', c.raw)), check.rootBundlePem],
    notAfterMs: Date.parse(leaf.validTo),
  };
}

function apiErrorText(k8s: KubeApi, err: unknown): string {
  if (err instanceof k8s.ApiException) {
    const body = typeof err.body === 'string' ? err.body : '';
    const message = /"message"\s*:\s*"([^"]*)"/.exec(body)?.[1];
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return errorMessage(err);
}
