import { decodeJwt } from 'jose';
import { tokenFile } from './workload-certificates.js';
import { errorMessage, MeshError } from '../../runtime/index.js';

/** CREDENTIAL_FETCHER_TYPE values: the projected token file (empty), or a cloud VM's metadata server. */
export const CREDENTIAL_FETCHER_TYPES = ['', 'GoogleComputeEngine'] as const;
/** CREDENTIAL_IDENTITY_PROVIDER values the metadata-server fetcher serves. */
export const CREDENTIAL_IDENTITY_PROVIDERS = ['GoogleComputeEngine'] as const;
const METADATA_SERVER = 'http://metadata.google.internal';
/** A cached identity token is fetched again this long before it expires. */
const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

export class CredentialFetcherError extends MeshError<'credential-fetcher-invalid'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('credential-fetcher-invalid', message, options);
  }
}

export interface CredentialFetcherOptions {
  /** CREDENTIAL_FETCHER_TYPE. */
  readonly type: string;
  /** CREDENTIAL_IDENTITY_PROVIDER. */
  readonly identityProvider: string;
  /** The token's audience on a VM: the mesh trust domain. */
  readonly audience: string;
  /** The projected token file used without a fetcher type. */
  readonly tokenPath: string;
  /** The metadata server; the cloud's own unless a test names another. */
  readonly metadataServer?: string;
  readonly now?: () => number;
}

/**
 * The credential the agent presents to the CA and the daemon. Without a fetcher type, the
 * projected service-account token read fresh from its file. With `GoogleComputeEngine`, the VM's
 * identity token from the metadata server for the trust domain as audience, kept until shortly
 * before it expires. An unknown type or provider is an error naming the setting.
 */
export function credentialFetcher(options: CredentialFetcherOptions): () => Promise<string> {
  if (options.type === '') return tokenFile(options.tokenPath);
  if (!(CREDENTIAL_FETCHER_TYPES as readonly string[]).includes(options.type)) {
    throw new CredentialFetcherError(
      `CREDENTIAL_FETCHER_TYPE must be empty or one of ${CREDENTIAL_FETCHER_TYPES.filter((type) => type !== '').join(', ')}, got "${options.type}"`,
    );
  }
  if (!(CREDENTIAL_IDENTITY_PROVIDERS as readonly string[]).includes(options.identityProvider)) {
    throw new CredentialFetcherError(
      `CREDENTIAL_IDENTITY_PROVIDER must be one of ${CREDENTIAL_IDENTITY_PROVIDERS.join(', ')} with CREDENTIAL_FETCHER_TYPE ${options.type}, got "${options.identityProvider}"`,
    );
  }
  const now = options.now ?? Date.now;
  const url = new URL('/computeMetadata/v1/instance/service-accounts/default/identity', options.metadataServer ?? METADATA_SERVER);
  url.searchParams.set('audience', options.audience);
  url.searchParams.set('format', 'full');
  let cached: { token: string; refreshAt: number } | undefined;
  return async () => {
    if (cached && now() < cached.refreshAt) return cached.token;
    const response = await fetch(url, { headers: { 'Metadata-Flavor': 'Google' }, signal: AbortSignal.timeout(5_000) });
    const body = (await response.text()).trim();
    if (response.status !== 200)
      throw new CredentialFetcherError(`the metadata server answered ${response.status} for the identity token: ${body.slice(0, 200)}`);
    let expiresAt: number;
    try {
      const exp = decodeJwt(body).exp;
      expiresAt = typeof exp === 'number' ? exp * 1000 : now();
    } catch (error) {
      throw new CredentialFetcherError(`the metadata server's identity token is not a JWT: ${errorMessage(error)}`);
    }
    cached = { token: body, refreshAt: expiresAt - REFRESH_BEFORE_EXPIRY_MS };
    return body;
  };
}
