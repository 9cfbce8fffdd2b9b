import { errorMessage, MeshError } from '../runtime/index.js';
import type { Proxy } from './proxy.js';

/** What an authenticator sees of an xDS stream (the same shape as the CA's AuthContext). */
export interface XdsAuthContext {
  /** The bearer token of the `authorization` metadata, without the `Bearer ` prefix. */
  readonly bearerToken?: string;
  /** DER certificates the client presented over TLS, leaf first. */
  readonly peerCertificates?: readonly Buffer[];
}

/** Who connected: SPIFFE identities (`spiffe://<trust domain>/ns/<ns>/sa/<sa>`). */
export interface XdsCaller {
  readonly identities: readonly string[];
  readonly authenticator?: string;
}

/**
 * One way of proving who the stream is (a token reviewer, a JWT verifier, a client
 * certificate check): resolves undefined when the stream carries no credential of its kind and
 * throws when the credential is there but not acceptable. The CA's authenticators fit as they are.
 */
export interface XdsAuthenticator {
  readonly name: string;
  authenticate(context: XdsAuthContext): Promise<XdsCaller | undefined>;
}

export interface WorkloadIdentity {
  readonly trustDomain: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

export type XdsAuthErrorCode = 'unauthenticated' | 'permission-denied';

/** Tries each authenticator in turn; the first that recognises a credential decides. */
export async function authenticateStream(
  authenticators: readonly XdsAuthenticator[],
  context: XdsAuthContext,
): Promise<{ caller: XdsCaller } | { error: MeshError<XdsAuthErrorCode>; reasons: string[] }> {
  const reasons: string[] = [];
  for (const authenticator of authenticators) {
    try {
      const caller = await authenticator.authenticate(context);
      if (caller) return { caller };
    } catch (error) {
      reasons.push(`${authenticator.name}: ${errorMessage(error)}`);
    }
  }
  if (reasons.length === 0) reasons.push('no credential presented');
  return { error: new MeshError('unauthenticated', 'authentication failure'), reasons };
}

/** `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`, or undefined. */
export function parseWorkloadIdentity(uri: string): WorkloadIdentity | undefined {
  const match = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  if (!match) return undefined;
  const [, trustDomain = '', namespace = '', serviceAccount = ''] = match;
  return { trustDomain, namespace, serviceAccount };
}

/**
 * The reference's identity check: one of the caller's identities must be in the namespace the
 * proxy claims and, when it names one, its service account. Returns the matching identity, or
 * a reason without secrets.
 */
export function checkProxyIdentity(proxy: Proxy, identities: readonly string[]): { ok: true; identity: WorkloadIdentity } | { ok: false; reason: string } {
  for (const raw of identities) {
    const identity = parseWorkloadIdentity(raw);
    if (!identity) continue;
    if (proxy.configNamespace !== '' && identity.namespace !== proxy.configNamespace) continue;
    if (proxy.metadata.serviceAccount !== undefined && identity.serviceAccount !== proxy.metadata.serviceAccount) continue;
    return { ok: true, identity };
  }
  const claimed = `${proxy.configNamespace}/${proxy.metadata.serviceAccount ?? '*'}`;
  return { ok: false, reason: `no identity (${identities.join(', ') || 'none'}) matches the proxy's namespace and service account ${claimed}` };
}
