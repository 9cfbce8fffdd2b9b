import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { credentials, Metadata, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, UsageError, errorMessage } from '../../runtime/index.js';
import { DAEMON_NAME, revisionedName } from '../../names/index.js';

/** How meshctl secures its xDS streams: the XDS flag group. */
export interface XdsSecurity {
  /** `--plaintext`: plain HTTP/2. */
  readonly plaintext: boolean;
  /** `--cert-dir`: client certificates (cert-chain.pem, key.pem, root-cert.pem), no token. */
  readonly certDir: string;
  /** `--insecure`: skip verifying the daemon's certificate and name. */
  readonly insecure: boolean;
  /** `--authority`: the daemon name expected in its certificate ('' for `meshd[-<rev>].<ns>.svc`). */
  readonly authority: string;
}

/** The service account whose token a stream carries. */
export interface TokenSubject {
  readonly namespace: string;
  readonly serviceAccount: string;
}

/** The audience and lifetime of the token, as the reference's `CreatePerRPCCredentials`. */
export const XDS_TOKEN_AUDIENCE = 'mesh-ca';
export const XDS_TOKEN_EXPIRATION_SECONDS = 3600;

/** What every daemon's channel is opened with. */
export interface XdsChannel {
  readonly credentials: ChannelCredentials;
  readonly channelOptions: ChannelOptions;
  /** The stream's metadata: the bearer token, unless certificates authenticate. */
  readonly metadata: Metadata;
}

/** `meshd.<ns>.svc`, or `meshd-<rev>.<ns>.svc` for a revision other than the default. */
export function defaultAuthority(meshNamespace: string, revision: string): string {
  return `${revisionedName(DAEMON_NAME, revision)}.${meshNamespace}.svc`;
}

/** A bound token of the service account for the daemons (a TokenRequest). */
export async function requestXdsToken(kubeConfig: KubeConfig, subject: TokenSubject): Promise<string> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  try {
    const answer = await kubeConfig.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
      name: subject.serviceAccount,
      namespace: subject.namespace,
      body: { spec: { audiences: [XDS_TOKEN_AUDIENCE], expirationSeconds: XDS_TOKEN_EXPIRATION_SECONDS } },
    });
    const token = answer.status?.token ?? '';
    if (token === '') throw new MeshError('xds-query-failed', 'the answer holds no token');
    return token;
  } catch (error) {
    const body = (error as { body?: unknown }).body;
    const reason = typeof body === 'string' && body !== '' ? body : errorMessage(error);
    throw new MeshError('xds-query-failed', `failed to create a token for service account ${subject.namespace}/${subject.serviceAccount}: ${reason}`, {
      cause: error,
    });
  }
}

async function readCertFile(certDir: string, name: string): Promise<Buffer> {
  try {
    return await readFile(join(certDir, name));
  } catch (error) {
    throw new UsageError(`--cert-dir ${certDir}: cannot read ${name}: ${errorMessage(error)}`, { cause: error, exitCode: 64 });
  }
}

/**
 * The channel every daemon is dialled with. Certificates (`--cert-dir`) authenticate on their
 * own and the daemon is verified against root-cert.pem under `authority` (unless `--insecure`);
 * otherwise TLS that does not verify the daemon (the reference's InsecureSkipVerify), or plain
 * HTTP/2 with `--plaintext`, and a bearer token. The daemon serves debug information to
 * authenticated streams only, so `--plaintext` carries the token too (over plain text it is
 * accepted where the daemon runs with XDS_AUTH_PLAINTEXT).
 */
export async function xdsChannel(security: XdsSecurity, authority: string, token: () => Promise<string>): Promise<XdsChannel> {
  const channelOptions: ChannelOptions = { 'grpc.default_authority': authority };
  const metadata = new Metadata();
  if (security.certDir !== '') {
    const [chain, key, root] = await Promise.all(['cert-chain.pem', 'key.pem', 'root-cert.pem'].map((name) => readCertFile(security.certDir, name)));
    const verify = security.insecure ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {};
    return {
      credentials: credentials.createSsl(root ?? null, key ?? null, chain ?? null, verify),
      channelOptions: { ...channelOptions, 'grpc.ssl_target_name_override': authority },
      metadata,
    };
  }
  metadata.set('authorization', `Bearer ${await token()}`);
  if (security.plaintext) return { credentials: credentials.createInsecure(), channelOptions, metadata };
  return {
    credentials: credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined }),
    channelOptions: { ...channelOptions, 'grpc.ssl_target_name_override': authority },
    metadata,
  };
}
