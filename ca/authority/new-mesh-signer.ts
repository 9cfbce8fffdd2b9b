import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { UsageError, newRealClock, type Logger } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { CsrSigner } from './csr-signer.js';
import { newKubeRegistrationAuthority, type KubeRegistrationAuthority } from './kube-registration-authority.js';
import { newMeshCa, type MeshCa, type MeshCaOptions } from './new-mesh-ca.js';
import type { RootBundleSource } from '../trust/trust-bundle-set.js';

/** Where the reference mounts the external signer's root certificate. */
export const DEFAULT_SIGNER_ROOT_FILE = './etc/external-ca-cert/root-cert.pem';

/** EXTERNAL_CA=MESHD_RA_ORCH_API: the Kubernetes signer that signs workload certificates (`ca-settings.ts` checks and maps it). */
export interface ExternalSigning {
  /** ORCH_SIGNER, such as `example.com/mesh-signer`. */
  readonly signerName: string;
}

export interface MeshSignerOptions extends MeshCaOptions {
  /** Absent: our own CA signs. */
  readonly externalSigning?: ExternalSigning;
  /** Kubernetes mode; EXTERNAL_CA=MESHD_RA_ORCH_API needs it. */
  readonly kubeConfig?: KubeConfig;
  /** The external signer's CA certificates, PEM; read from `signerRootFile` when absent. */
  readonly signerRootPem?: string;
  /** Default DEFAULT_SIGNER_ROOT_FILE. */
  readonly signerRootFile?: string;
  /** The registration authority's logger (the `ca` scope); `log` when absent. */
  readonly raLog?: Logger;
  /** How long the registration authority waits for the signer; default 30 s. */
  readonly raTimeoutMs?: number;
}

/** Who signs workload certificates, and where our trust domain's roots come from. */
export type MeshSigner =
  | {
      readonly kind: 'ca';
      /** The self-signed or plugged CA, with its root rotator. */
      readonly ca: MeshCa;
      readonly signer: CsrSigner;
      readonly localRoots: RootBundleSource;
      readonly trustDomain: string;
    }
  | {
      readonly kind: 'ra';
      readonly ra: KubeRegistrationAuthority;
      readonly signer: CsrSigner;
      readonly localRoots: RootBundleSource;
      readonly trustDomain: string;
    };

/**
 * Chooses the signer: with `externalSigning` (EXTERNAL_CA=MESHD_RA_ORCH_API), a registration
 * authority sending CSRs to the ORCH_SIGNER signer through the Kubernetes API; otherwise our own
 * CA (plugged from ROOT_CA_DIR, else self-signed). Undefined when ENABLE_CA_SERVER is false.
 * Refuses external signing without a Kubernetes cluster or the signer's root certificate.
 */
export async function newMeshSigner(options: MeshSignerOptions): Promise<MeshSigner | undefined> {
  const { caSettings, externalSigning, log } = options;
  const trustDomain = options.trustDomain ?? 'cluster.local';
  if (!externalSigning) {
    const ca = await newMeshCa(options);
    return ca && { kind: 'ca', ca, signer: ca.authority, localRoots: ca.authority, trustDomain: ca.trustDomain };
  }

  const { signerName } = externalSigning;
  if (!caSettings.enabled) {
    log.info('the CA server is disabled (ENABLE_CA_SERVER=false)');
    return undefined;
  }
  if (!options.kubeConfig)
    throw new UsageError('EXTERNAL_CA=MESHD_RA_ORCH_API needs a Kubernetes cluster (it signs through the CertificateSigningRequest API)');
  const signerRootPem = options.signerRootPem ?? (await readSignerRoot(options.signerRootFile ?? DEFAULT_SIGNER_ROOT_FILE));
  const ra = newKubeRegistrationAuthority({
    kubeConfig: options.kubeConfig,
    signerName,
    signerRootPem,
    clock: options.clock ?? newRealClock(),
    log: options.raLog ?? log,
    defaultTtlMs: caSettings.defaultWorkloadCertTtlMs,
    maxTtlMs: caSettings.maxWorkloadCertTtlMs,
    ...(options.raTimeoutMs === undefined ? {} : { timeoutMs: options.raTimeoutMs }),
  });
  log.info({ signerName }, 'signing workload certificates through the Kubernetes CertificateSigningRequest API');
  return { kind: 'ra', ra, signer: ra, localRoots: ra, trustDomain };
}

async function readSignerRoot(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new CaError('ca-material-invalid', `EXTERNAL_CA=MESHD_RA_ORCH_API needs the signer's root certificate in ${file}`, { cause: err });
  }
}
