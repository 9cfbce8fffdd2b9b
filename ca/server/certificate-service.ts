import type { Logger, MeshMetrics } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { AuthContext, Authenticator, Caller } from '../authn/authenticator.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import type { CsrSigner } from '../authority/csr-signer.js';
import { errorMessage } from '../../runtime/index.js';

export interface CertificateServiceOptions {
  /** Signs workload CSRs, unless `signer` is given. */
  readonly ca?: CertificateAuthority;
  /** Signs workload CSRs instead of `ca`: the registration authority of EXTERNAL_CA. */
  readonly signer?: CsrSigner;
  /** Tried in order; the first that accepts the caller wins. */
  readonly authenticators: readonly Authenticator[];
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** The `serverca` scope. */
  readonly log: Logger;
  /**
   * The clusters whose workloads this CA serves (the daemon's own, `CLUSTER_ID`): a caller
   * claiming another is refused, as the reference refuses a cluster it holds no credentials for.
   * Absent: any claim is accepted.
   */
  readonly knownClusterIds?: readonly string[];
}

export interface CreateCertificateInput {
  readonly csr: string;
  /** Requested lifetime in seconds; non-positive asks for the default. */
  readonly validityDurationSeconds: number;
}

/** The transport-free core of CreateCertificate: authenticate, sign, count each outcome. */
export interface CertificateService {
  /** The chain (leaf, intermediates, trust bundle); throws CaError, `unauthenticated` without detail. */
  createCertificate(input: CreateCertificateInput, context: AuthContext): Promise<string[]>;
}

/** Bounded values of the `error` label of ca_server_csr_sign_err_count. */
type SignErrorLabel = 'ttl' | 'ca-not-ready' | 'cert-gen';

export function newCertificateService(options: CertificateServiceOptions): CertificateService {
  const { authenticators, metrics, log } = options;
  const signer: CsrSigner | undefined = options.signer ?? options.ca;
  if (!signer) throw new CaError('ca-unavailable', 'the certificate service needs a CA or a signer');
  const csrCount = metrics.counter('ca_server_csr_count');
  const authFailures = metrics.counter('ca_server_authentication_failure_count');
  const parseErrors = metrics.counter('ca_server_csr_parsing_err_count');
  const idErrors = metrics.counter('ca_server_id_extraction_err_count');
  const signErrors = metrics.counter('ca_server_csr_sign_err_count');
  const issued = metrics.counter('ca_server_success_cert_issuance_count');

  const authenticate = async (context: AuthContext): Promise<Caller> => {
    const known = options.knownClusterIds;
    if (context.clusterId !== undefined && context.clusterId !== '' && known && !known.includes(context.clusterId)) {
      authFailures.inc();
      log.warn({ clusterId: context.clusterId, knownClusters: known }, 'certificate request refused: the caller claims a cluster this daemon does not know');
      throw new CaError('unauthenticated', 'request authentication failed');
    }
    const failures: string[] = [];
    for (const authenticator of authenticators) {
      try {
        const caller = await authenticator.authenticate(context);
        if (caller) return caller;
      } catch (err) {
        failures.push(`${authenticator.name}: ${errorMessage(err)}`);
      }
    }
    authFailures.inc();
    log.warn({ reasons: failures.length > 0 ? failures : ['no credential'] }, 'certificate request authentication failed');
    throw new CaError('unauthenticated', 'request authentication failed');
  };

  return {
    createCertificate: async (input, context) => {
      csrCount.inc();
      const caller = await authenticate(context);
      const identity = caller.identities[0];
      if (identity === undefined) {
        idErrors.inc();
        throw new CaError('unauthenticated', 'request authentication failed');
      }
      try {
        const result = await signer.signCsr(input.csr, identity, input.validityDurationSeconds * 1000);
        issued.inc();
        if (log.isEnabled('debug'))
          log.debug({ identity, authenticator: caller.authenticator, notAfter: new Date(result.notAfterMs).toISOString() }, 'issued a certificate');
        return [...result.certChainPem];
      } catch (err) {
        if (!(err instanceof CaError)) {
          signErrors.inc({ error: 'cert-gen' });
          log.error({ identity, error: errorMessage(err) }, 'certificate signing failed');
          throw new CaError('sign-failed', 'certificate signing failed', { cause: err });
        }
        const label = signErrorLabel(err);
        if (label) signErrors.inc({ error: label });
        else parseErrors.inc();
        log.warn({ identity, code: err.code, error: err.message }, 'certificate request refused');
        throw err;
      }
    },
  };
}

function signErrorLabel(err: CaError): SignErrorLabel | undefined {
  switch (err.code) {
    case 'csr-malformed':
    case 'csr-signature':
    case 'csr-unsupported':
      return undefined;
    case 'ttl-too-long':
      return 'ttl';
    case 'ca-unavailable':
      return 'ca-not-ready';
    default:
      return 'cert-gen';
  }
}
