import type { CaErrorCode } from '../ca-error.js';
import type { IssuedCertificate } from './certificate-authority.js';
import type { CaMaterial } from './key-cert-bundle.js';

/** The CA material to sign with from now on: sent before the first job, and again after a rotation. */
export interface SigningBundleMessage {
  readonly kind: 'bundle';
  readonly material: CaMaterial;
}

/**
 * One CSR to verify and sign, for a lifetime the calling thread has resolved (the default applied,
 * the maximum checked) and at its time, so that a certificate is the same whichever thread signs
 * it, fake clocks included.
 */
export interface SigningJobMessage {
  readonly kind: 'sign';
  readonly id: number;
  readonly csrPem: string;
  readonly identity: string;
  readonly resolvedTtlMs: number;
  readonly nowMs: number;
}

export type SigningMessage = SigningBundleMessage | SigningJobMessage;

/** A job's outcome: the certificate, or the error as data (`caCode` when it was a CaError, which keeps its code). */
export type SigningAnswer =
  | { readonly id: number; readonly issued: IssuedCertificate }
  | { readonly id: number; readonly error: { readonly caCode?: CaErrorCode; readonly message: string } };
