import { MeshError } from '../runtime/index.js';

/**
 * What can go wrong in the CA, as data. The gRPC edge maps codes to status codes: the
 * `csr-*` and `ttl-*` codes are the caller's fault (INVALID_ARGUMENT), `unauthenticated` is
 * UNAUTHENTICATED, the rest are ours (INTERNAL / UNAVAILABLE).
 */
export type CaErrorCode =
  | 'csr-malformed'
  | 'csr-signature'
  | 'csr-unsupported'
  | 'ttl-too-long'
  | 'unauthenticated'
  | 'identity-invalid'
  | 'ca-material-invalid'
  | 'ca-store-conflict'
  | 'ca-unavailable'
  | 'sign-failed';

export class CaError extends MeshError<CaErrorCode> {
  constructor(code: CaErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
